// Operator settings of the webhook sender, set once by `serve` from its flags before anything is
// delivered: the CIDRs allowed despite being private (--webhook-allow-cidr) and the extra trusted
// CAs for LAN receivers (--webhook-ca-file). CLI commands never deliver, so they keep the defaults.
import { readFileSync } from 'node:fs'
import { BlockList, isIP } from 'node:net'
import type { SecureContext } from 'node:tls'

export interface WebhookConfig {
  /** Addresses an operator allowed although they are loopback, private, link-local, ... */
  allowed: BlockList
  allowedText: string[]
  /**
   * Trusted roots for receivers: the public ones plus --webhook-ca-file, parsed once. (Passing
   * `ca` to an agent instead would make node:https fold every root certificate into the pool key
   * of every request and parse them all again for each new connection.)
   */
  secureContext: SecureContext | undefined
  /**
   * Multiplies the retry delays. Test-only (env BULWARK_WEBHOOK_RETRY_SCALE, e.g. 0.001), so the
   * retry schedule can be exercised in seconds; production leaves it at 1.
   */
  retryScale: number
}

export const webhookConfig: WebhookConfig = { allowed: new BlockList(), allowedText: [], secureContext: undefined, retryScale: retryScaleFromEnv() }

function retryScaleFromEnv(): number {
  const raw = process.env.BULWARK_WEBHOOK_RETRY_SCALE
  if (raw === undefined || raw === '') return 1
  const scale = Number(raw)
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1) throw new Error('BULWARK_WEBHOOK_RETRY_SCALE must be a number in (0, 1]')
  return scale
}

/** Parses "10.0.0.0/8", "fd00::/8" or a single address; throws Error with a one-line reason. */
export function parseCidr(text: string): { network: string; prefix: number; type: 'ipv4' | 'ipv6' } {
  const [network, prefixText, extra] = text.split('/')
  const version = isIP(network ?? '')
  if (!version || extra !== undefined) throw new Error(`--webhook-allow-cidr ${JSON.stringify(text)} is not an address or CIDR like 192.168.0.0/16`)
  const max = version === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max) throw new Error(`--webhook-allow-cidr ${JSON.stringify(text)} has a prefix length outside 0-${max}`)
  return { network, prefix, type: version === 4 ? 'ipv4' : 'ipv6' }
}

/** Called by serve; throws Error (a usage error for the caller) on a bad CIDR or unreadable CA file. */
export function configureWebhooks(options: { allowCidrs: string[]; caFile?: string }): void {
  const allowed = new BlockList()
  for (const text of options.allowCidrs) {
    const { network, prefix, type } = parseCidr(text)
    allowed.addSubnet(network, prefix, type)
  }
  let secureContext: SecureContext | undefined
  if (options.caFile !== undefined) {
    let pem: string
    try {
      pem = readFileSync(options.caFile, 'utf8')
    } catch (error) {
      throw new Error(`--webhook-ca-file ${options.caFile}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--webhook-ca-file ${options.caFile} holds no PEM certificate`)
    try {
      // node:tls is loaded here, only when a CA file is given (it costs a start 20-30 ms otherwise).
      const tls = process.getBuiltinModule('node:tls')
      secureContext = tls.createSecureContext({ ca: [...tls.rootCertificates, pem] })
    } catch (error) {
      throw new Error(`--webhook-ca-file ${options.caFile}: ${(error as Error).message}`)
    }
  }
  webhookConfig.allowed = allowed
  webhookConfig.allowedText = [...options.allowCidrs]
  webhookConfig.secureContext = secureContext
}
