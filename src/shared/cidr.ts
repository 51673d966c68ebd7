// CIDR flags (--webhook-allow-cidr, --trusted-proxy): "10.0.0.0/8", "fd00::/8" or one address.
import { BlockList, isIP } from 'node:net'

export interface Cidr {
  network: string
  prefix: number
  type: 'ipv4' | 'ipv6'
}

/** Parses one CIDR; throws Error with a one-line reason naming the flag. */
function parseCidr(text: string, flag: string): Cidr {
  const [network, prefixText, extra] = text.split('/')
  const version = isIP(network ?? '')
  if (!version || extra !== undefined) throw new Error(`${flag} ${JSON.stringify(text)} is not an address or CIDR like 192.168.0.0/16`)
  const max = version === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max) throw new Error(`${flag} ${JSON.stringify(text)} has a prefix length outside 0-${max}`)
  return { network, prefix, type: version === 4 ? 'ipv4' : 'ipv6' }
}

/**
 * A BlockList holding every CIDR given to a flag.
 *
 * @example
 * cidrList(['10.0.0.0/8'], '--trusted-proxy').check('10.1.2.3') // true
 */
export function cidrList(texts: readonly string[], flag: string): BlockList {
  const list = new BlockList()
  for (const text of texts) {
    const { network, prefix, type } = parseCidr(text, flag)
    list.addSubnet(network, prefix, type)
  }
  return list
}
