// Where a webhook may point: https, no credentials, and never at loopback, private, link-local,
// multicast, unspecified or otherwise special addresses unless the operator allowed them
// (--webhook-allow-cidr). The check is made twice: on the URL when it is registered (a clear 400),
// and on the very address the sender connects to (guardedLookup), so a DNS answer that changes
// after registration (DNS rebinding) cannot reach an internal service.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { validationError } from '../http/errors.ts'
import { webhookConfig } from './config.ts'

const MAX_URL_LENGTH = 2048
const DNS_TIMEOUT_MS = 5000

// IANA special-purpose ranges: nothing here is a public receiver.
const refused = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) refused.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) refused.addSubnet(network, prefix, 'ipv6')

/** An address in canonical form; IPv4-mapped IPv6 (::ffff:127.0.0.1) becomes the IPv4 it carries. */
function canonical(address: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const version = isIP(bare)
  if (version === 4) return { address: bare, type: 'ipv4' }
  if (version !== 6) return undefined
  const compressed = new URL(`http://[${bare}]/`).hostname.slice(1, -1)
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed)
  if (mapped) {
    const high = parseInt(mapped[1], 16)
    const low = parseInt(mapped[2], 16)
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, type: 'ipv4' }
  }
  return { address: compressed, type: 'ipv6' }
}

/** True when the sender may connect to this address. */
export function addressAllowed(address: string): boolean {
  const ip = canonical(address)
  if (!ip) return false
  if (webhookConfig.allowed.check(ip.address, ip.type)) return true
  return !refused.check(ip.address, ip.type)
}

function refusal(address: string): string {
  return `address ${address} is loopback, private, link-local, multicast or reserved; an operator can allow it with --webhook-allow-cidr`
}

/** Syntax and literal-address rules; throws 400 validation_failed on field `url`. */
export function parseWebhookUrl(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH) throw validationError('url', `must be at most ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw validationError('url', 'is not a valid absolute URL')
  }
  if (url.protocol !== 'https:') throw validationError('url', 'must use https')
  if (url.username || url.password) throw validationError('url', 'must not contain credentials (user:password@)')
  if (!url.hostname) throw validationError('url', 'must name a host')
  const literal = canonical(url.hostname)
  if (literal && !addressAllowed(literal.address)) throw validationError('url', refusal(literal.address))
  return url
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), DNS_TIMEOUT_MS)
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(addresses)
    })
  })
}

/** Registration-time check of a host name: every address it resolves to must be allowed. */
export async function checkWebhookHost(url: URL): Promise<void> {
  if (canonical(url.hostname)) return // a literal address, already checked by parseWebhookUrl
  let addresses: LookupAddress[]
  try {
    addresses = await resolveAll(url.hostname)
  } catch (error) {
    throw validationError('url', `host ${url.hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  const bad = addresses.find((a) => !addressAllowed(a.address))
  if (bad) throw validationError('url', `host ${url.hostname} resolves to ${refusal(bad.address)}`)
}

/**
 * The `lookup` the sender's sockets use: resolves, drops every refused address and connects only to
 * an allowed one, so the address checked is the address connected to. (Literal addresses skip
 * lookup in node:net; the sender checks those itself with addressAllowed.)
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { family: options.family, hints: options.hints, all: true, verbatim: true }, (error, addresses) => {
    if (error) return callback(error, '', 0)
    const usable = addresses.filter((a) => addressAllowed(a.address))
    if (!usable.length) {
      const refusedError = Object.assign(new Error(`${hostname} resolves to ${refusal(addresses[0]?.address ?? '?')}`), { code: 'EADDRNOTALLOWED' })
      return callback(refusedError, '', 0)
    }
    if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable)
    else callback(null, usable[0].address, usable[0].family)
  })
}
