// Where a webhook may point: https, no credentials, and only at a globally reachable address
// unless the operator allowed it (--webhook-allow-cidr). Which blocks are refused, and how an IPv6
// address that carries an IPv4 one is read, is the table in special-addresses.ts. One rule,
// refusalOf, is applied twice: on the URL when it is registered (a clear 400), and on the very
// address the sender connects to (guardedLookup, and the sender's check of literal hosts through
// addressAllowed), so a DNS answer that changes after registration (DNS rebinding) cannot reach an
// internal service.
import type { LookupAddress } from 'node:dns'
import type { BlockList, LookupFunction } from 'node:net'
import { validationError } from '../shared/errors.ts'
import { embeddedIpv4, findSpecialBlock, ipv4Text, parseIp } from './special-addresses.ts'

const MAX_URL_LENGTH = 2048
const DNS_TIMEOUT_MS = 5000

/**
 * Why the sender may not connect to this address, or undefined when it may. The operator's
 * --webhook-allow-cidr ranges win, for the address itself and for each IPv4 address it carries
 * (allowing 192.168.0.0/16 allows ::ffff:192.168.1.5 too).
 */
function refusalOf(address: string, allowed: BlockList): string | undefined {
  const ip = parseIp(address)
  if (!ip) return `${address} is not an IP address`
  const text = ip.version === 4 ? ipv4Text(ip.value) : address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (allowed.check(text, ip.version === 4 ? 'ipv4' : 'ipv6')) return undefined
  const block = findSpecialBlock(ip)
  if (!block || block.verdict === 'global') return undefined
  if (block.verdict === 'refused') return `${text} is in ${block.cidr} (${block.name})`
  for (const inner of embeddedIpv4(block.verdict, ip.value)) {
    const why = refusalOf(ipv4Text(inner), allowed)
    if (why) return `${text} carries ${ipv4Text(inner)} (${block.name} ${block.cidr}), and ${why}`
  }
  return undefined
}

// node:dns is loaded at the first lookup (a webhook's URL), not at every start.
const dnsLookup = () => process.getBuiltinModule('node:dns').lookup

/** True when the sender may connect to this address: the one predicate, at registration and at connect time. */
export function addressAllowed(address: string, allowed: BlockList): boolean {
  return refusalOf(address, allowed) === undefined
}

function refusal(why: string): string {
  return `address ${why}, which is not globally reachable; an operator can allow it with --webhook-allow-cidr`
}

/** The URL's host when it is an IP literal (WHATWG URL has already normalised 2130706433 and 0x7f.1 to 127.0.0.1). */
function literalHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return parseIp(host) ? host : undefined
}

/** Syntax and literal-address rules; throws 400 validation_failed on field `url`. */
export function parseWebhookUrl(raw: string, allowed: BlockList): URL {
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
  const literal = literalHost(url)
  const why = literal === undefined ? undefined : refusalOf(literal, allowed)
  if (why) throw validationError('url', refusal(why))
  return url
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), DNS_TIMEOUT_MS)
    dnsLookup()(hostname, { all: true, verbatim: true }, (error, addresses) => {
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(addresses)
    })
  })
}

/** Registration-time check of a host name: every address it resolves to must be allowed. */
export async function checkWebhookHost(url: URL, allowed: BlockList): Promise<void> {
  if (literalHost(url) !== undefined) return // a literal address, already checked by parseWebhookUrl
  let addresses: LookupAddress[]
  try {
    addresses = await resolveAll(url.hostname)
  } catch (error) {
    throw validationError('url', `host ${url.hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  for (const { address } of addresses) {
    const why = refusalOf(address, allowed)
    if (why) throw validationError('url', `host ${url.hostname} resolves to ${refusal(why)}`)
  }
}

/**
 * The `lookup` the sender's sockets use: resolves, drops every refused address and connects only to
 * an allowed one, so the address checked is the address connected to. (Literal addresses skip
 * lookup in node:net; the sender checks those itself with addressAllowed.)
 */
export function guardedLookup(allowed: BlockList): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup()(hostname, { family: options.family, hints: options.hints, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const usable = addresses.filter((a) => addressAllowed(a.address, allowed))
      if (!usable.length) {
        const why = addresses.length ? refusal(refusalOf(addresses[0].address, allowed) ?? addresses[0].address) : 'no address'
        const refusedError = Object.assign(new Error(`${hostname} resolves to ${why}`), { code: 'EADDRNOTALLOWED' })
        return callback(refusedError, '', 0)
      }
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable)
      else callback(null, usable[0].address, usable[0].family)
    })
  }
}
