// Operator settings of the webhook sender, set once by `serve` from its flags before anything is
// delivered: the CIDRs allowed despite being private (--webhook-allow-cidr) and the extra trusted
// CAs for LAN receivers (--webhook-ca-file). CLI commands never deliver, so they keep the defaults.
import { readFileSync } from 'node:fs'
import { BlockList } from 'node:net'
import { cidrList } from '../shared/cidr.ts'
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

/** Called by serve; throws Error (a usage error for the caller) on a bad CIDR or unreadable CA file. */
export function configureWebhooks(options: { allowCidrs: string[]; caFile?: string }): void {
  const allowed = cidrList(options.allowCidrs, '--webhook-allow-cidr')
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
