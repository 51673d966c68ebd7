// The address blocks that decide where a webhook may point, one row per block:
//   block    CIDR, IPv4 or IPv6
//   name     what the block is, quoted in the refusal
//   verdict  'global': an ordinary destination; 'refused'; or how an IPv6 block carries an IPv4
//            address ('last32', '6to4', 'teredo'): such an address is judged by the IPv4 it carries
// The most specific block holding an address decides, so a globally reachable entry inside a
// refused one (192.0.0.9/32 inside 192.0.0.0/24) is an exception to it; an address in no block is
// an ordinary destination. The RFC of each row is in its comment.
//
// Source: the IANA IPv4 and IPv6 Special-Purpose Address Registries (newest entry 100:0:0:1::/64,
// 2025-04). Every entry not marked "Globally Reachable: True" is refused, including terminated ones
// that no longer carry flags (192.88.99.0/24, 2001:10::/28); the two marked "N/A" (Teredo, 6to4)
// and the two that wrap an IPv4 address (IPv4-mapped, which the registry marks not reachable in
// itself, and the NAT64 well-known prefix) are judged by the IPv4 address they carry. Beyond the
// registries: multicast, the IPv4-compatible and SIIT forms (judged by their IPv4), site-local
// fec0::/10, and every IPv6 address outside global unicast 2000::/3, which IANA keeps reserved.
import { isIP } from 'node:net'

export type Embedding = 'last32' | '6to4' | 'teredo'
export type Verdict = 'global' | 'refused' | Embedding
export interface Ip {
  version: 4 | 6
  value: bigint
}
export interface SpecialBlock {
  cidr: string
  name: string
  verdict: Verdict
  network: bigint
  prefix: number
  version: 4 | 6
}

const G = 'global'
const R = 'refused'

const IPV4: [string, string, Verdict][] = [
  ['0.0.0.0/8', '"this network"', R], // RFC 791 section 3.2
  ['0.0.0.0/32', '"this host on this network"', R], // RFC 1122 section 3.2.1.3
  ['10.0.0.0/8', 'private-use', R], // RFC 1918
  ['100.64.0.0/10', 'shared address space (carrier-grade NAT)', R], // RFC 6598
  ['127.0.0.0/8', 'loopback', R], // RFC 1122 section 3.2.1.3
  ['169.254.0.0/16', 'link-local', R], // RFC 3927
  ['172.16.0.0/12', 'private-use', R], // RFC 1918
  ['192.0.0.0/24', 'IETF protocol assignments', R], // RFC 6890 section 2.1
  ['192.0.0.0/29', 'IPv4 service continuity prefix', R], // RFC 7335
  ['192.0.0.8/32', 'IPv4 dummy address', R], // RFC 7600
  ['192.0.0.9/32', 'Port Control Protocol anycast', G], // RFC 7723
  ['192.0.0.10/32', 'TURN anycast', G], // RFC 8155
  ['192.0.0.170/32', 'NAT64/DNS64 discovery', R], // RFC 8880, RFC 7050 section 2.2
  ['192.0.0.171/32', 'NAT64/DNS64 discovery', R], // RFC 8880, RFC 7050 section 2.2
  ['192.0.2.0/24', 'documentation (TEST-NET-1)', R], // RFC 5737
  ['192.31.196.0/24', 'AS112-v4', G], // RFC 7535
  ['192.52.193.0/24', 'AMT', G], // RFC 7450
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast', R], // RFC 7526 (terminated 2015-03)
  ['192.88.99.2/32', '6a44 relay anycast', R], // RFC 6751
  ['192.168.0.0/16', 'private-use', R], // RFC 1918
  ['192.175.48.0/24', 'direct delegation AS112 service', G], // RFC 7534
  ['198.18.0.0/15', 'benchmarking', R], // RFC 2544
  ['198.51.100.0/24', 'documentation (TEST-NET-2)', R], // RFC 5737
  ['203.0.113.0/24', 'documentation (TEST-NET-3)', R], // RFC 5737
  ['224.0.0.0/4', 'multicast', R], // RFC 5771 (not in the special-purpose registry)
  ['240.0.0.0/4', 'reserved', R], // RFC 1112 section 4
  ['255.255.255.255/32', 'limited broadcast', R], // RFC 919 section 7, RFC 8190
]

const IPV6: [string, string, Verdict][] = [
  ['::/0', 'reserved by the IETF, outside global unicast 2000::/3', R], // RFC 4291 section 2.4
  ['2000::/3', 'global unicast', G], // RFC 4291 section 2.4
  ['::/128', 'unspecified', R], // RFC 4291
  ['::1/128', 'loopback', R], // RFC 4291
  ['::/96', 'IPv4-compatible (deprecated)', 'last32'], // RFC 4291 section 2.5.5.1 (not in the registry)
  ['::ffff:0:0/96', 'IPv4-mapped', 'last32'], // RFC 4291
  ['::ffff:0:0:0/96', 'IPv4-translated (SIIT)', 'last32'], // RFC 2765 section 2.1 (not in the registry)
  ['64:ff9b::/96', 'NAT64 well-known prefix', 'last32'], // RFC 6052
  // Where a local-use prefix carries the IPv4 depends on the length the operator picked (RFC 6052
  // allows /48 to /96), so there is no one embedded address to judge: refused, as registered.
  ['64:ff9b:1::/48', 'local-use NAT64', R], // RFC 8215
  ['100::/64', 'discard-only', R], // RFC 6666
  ['100:0:0:1::/64', 'dummy IPv6 prefix', R], // RFC 9780
  ['2001::/23', 'IETF protocol assignments', R], // RFC 2928
  ['2001::/32', 'Teredo', 'teredo'], // RFC 4380, RFC 8190
  ['2001:1::1/128', 'Port Control Protocol anycast', G], // RFC 7723
  ['2001:1::2/128', 'TURN anycast', G], // RFC 8155
  ['2001:1::3/128', 'DNS-SD service registration protocol anycast', G], // RFC 9665
  ['2001:2::/48', 'benchmarking', R], // RFC 5180, RFC Errata 1752
  ['2001:3::/32', 'AMT', G], // RFC 7450
  ['2001:4:112::/48', 'AS112-v6', G], // RFC 7535
  ['2001:10::/28', 'deprecated ORCHID', R], // RFC 4843 (terminated 2014-03)
  ['2001:20::/28', 'ORCHIDv2', G], // RFC 7343
  ['2001:30::/28', 'drone remote ID entity tags', G], // RFC 9374
  ['2001:db8::/32', 'documentation', R], // RFC 3849
  ['2002::/16', '6to4', '6to4'], // RFC 3056
  ['2620:4f:8000::/48', 'direct delegation AS112 service', G], // RFC 7534
  ['3fff::/20', 'documentation', R], // RFC 9637
  ['5f00::/16', 'segment routing (SRv6) SIDs', R], // RFC 9602
  ['fc00::/7', 'unique-local', R], // RFC 4193, RFC 8190
  ['fe80::/10', 'link-local', R], // RFC 4291
  ['fec0::/10', 'site-local (deprecated)', R], // RFC 3879 (not in the registry)
  ['ff00::/8', 'multicast', R], // RFC 4291 section 2.7 (not in the registry)
]

const WIDTH = { 4: 32n, 6: 128n } as const

function ipv4Value(text: string): bigint {
  return text.split('.').reduce((n, octet) => (n << 8n) | BigInt(octet), 0n)
}

function ipv6Value(text: string): bigint {
  // A dotted-quad tail (::ffff:127.0.0.1) is the last two groups written in decimal.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (tail) {
    const v4 = ipv4Value(tail[1])
    text = `${text.slice(0, tail.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const [head, rest] = text.split('::')
  const split = (part: string) => (part ? part.split(':') : [])
  const groups = rest === undefined ? split(head) : [...split(head), ...Array<string>(8 - split(head).length - split(rest).length).fill('0'), ...split(rest)]
  return groups.reduce((n, group) => (n << 16n) | BigInt(parseInt(group, 16)), 0n)
}

/** Parses an IPv4 or IPv6 literal, in any textual form (brackets and a zone id allowed). */
export function parseIp(text: string): Ip | undefined {
  let bare = text.replace(/^\[(.*)\]$/, '$1')
  if (bare.includes(':')) bare = bare.replace(/%.*$/, '')
  const version = isIP(bare)
  if (version === 4) return { version, value: ipv4Value(bare) }
  if (version === 6) return { version, value: ipv6Value(bare) }
  return undefined
}

export function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 255n).join('.')
}

// Parsed at first use, not at start: ~6 ms of isIP and BigInt work a server that never sees a
// webhook URL should not pay before its first answer.
let blocks: SpecialBlock[] | undefined

function parsedBlocks(): SpecialBlock[] {
  blocks ??= [...IPV4, ...IPV6].map(([cidr, name, verdict]) => {
    const [network, prefix] = cidr.split('/')
    const ip = parseIp(network)!
    return { cidr, name, verdict, network: ip.value, prefix: Number(prefix), version: ip.version }
  })
  return blocks
}

/** The most specific block that holds the address, if any. */
export function findSpecialBlock(ip: Ip): SpecialBlock | undefined {
  let best: SpecialBlock | undefined
  for (const block of parsedBlocks()) {
    if (block.version !== ip.version || (best && best.prefix >= block.prefix)) continue
    const shift = WIDTH[ip.version] - BigInt(block.prefix)
    if (ip.value >> shift === block.network >> shift) best = block
  }
  return best
}

/** The IPv4 addresses an IPv6 address carries: one, or for Teredo the server's then the client's. */
export function embeddedIpv4(how: Embedding, value: bigint): bigint[] {
  const low32 = value & 0xffffffffn
  if (how === 'last32') return [low32]
  if (how === '6to4') return [(value >> 80n) & 0xffffffffn]
  return [(value >> 64n) & 0xffffffffn, low32 ^ 0xffffffffn] // the client's address is stored inverted
}
