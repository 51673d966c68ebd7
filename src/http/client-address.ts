// The address a request comes from, for per-address limits. It is the socket's, unless the socket
// belongs to a proxy the operator trusts (--trusted-proxy CIDR): then it is the first hop of
// X-Forwarded-For, read from the right, that is not itself a trusted proxy. Each proxy appends the
// address it received the request from, so everything left of the first untrusted hop may be
// forged by the client; forwarding headers from anyone not trusted are ignored altogether.
import { isIP, type BlockList } from 'node:net'
import type { IncomingMessage } from 'node:http'

/** "::ffff:10.0.0.1" and "10.0.0.1" are one client; IPv6 is kept as given, without brackets. */
function normalise(address: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const bare = address.trim().replace(/^\[(.*)\](?::\d+)?$/, '$1')
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  const plain = mapped ? mapped[1] : bare
  const version = isIP(plain)
  return version === 0 ? undefined : { address: plain.toLowerCase(), type: version === 4 ? 'ipv4' : 'ipv6' }
}

/**
 * The client's address as the per-address limits see it.
 *
 * @example
 * // socket 10.0.0.5 (trusted), X-Forwarded-For: "6.6.6.6, 203.0.113.7" -> "203.0.113.7"
 * clientAddress(req, trusted)
 */
export function clientAddress(req: IncomingMessage, trusted: BlockList | undefined): string {
  const socket = normalise(req.socket.remoteAddress ?? '')
  if (!socket) return '?'
  if (!trusted?.check(socket.address, socket.type)) return socket.address
  const header = req.headers['x-forwarded-for']
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').filter((hop) => hop.trim() !== '')
  let client = socket.address
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalise(hops[i])
    // A hop a trusted proxy wrote is an address; anything else means the chain is not believable
    // from here on, so the last address vouched for stands.
    if (!hop) break
    client = hop.address
    if (!trusted.check(hop.address, hop.type)) break
  }
  return client
}
