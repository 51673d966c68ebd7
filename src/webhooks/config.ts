// The webhook sender's settings, made once from the Config (src/app.ts) and passed to the routes
// that register endpoints and to the sender: the ranges an operator allowed although they are
// private (--webhook-allow-cidr) and the extra trusted CAs for LAN receivers (--webhook-ca-file).
import { readFileSync } from 'node:fs'
import type { BlockList } from 'node:net'
import type { SecureContext } from 'node:tls'
import { cidrList } from '../shared/cidr.ts'

export interface WebhookSettings {
  /** Addresses an operator allowed although they are loopback, private, link-local, ... */
  readonly allowed: BlockList
  /**
   * Trusted roots for receivers: the public ones plus --webhook-ca-file, parsed once. (Passing
   * `ca` to an agent instead would make node:https fold every root certificate into the pool key
   * of every request and parse them all again for each new connection.)
   */
  readonly secureContext: SecureContext | undefined
  /** Multiplies the retry delays (test-only; 1 in production). */
  readonly retryScale: number
}

/**
 * Settings from the Config's webhook part; throws Error with a one-line reason on a bad CIDR or an
 * unreadable CA file.
 *
 * @example
 * const settings = webhookSettings({ allowCidrs: ['192.168.0.0/16'], caFile: undefined, retryScale: 1 })
 */
export function webhookSettings(options: { allowCidrs: readonly string[]; caFile: string | undefined; retryScale: number }): WebhookSettings {
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
  return Object.freeze({ allowed, secureContext, retryScale: options.retryScale })
}
