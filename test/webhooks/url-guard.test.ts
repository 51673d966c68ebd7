// Where a webhook may point (SPEC section 7). The one address predicate is judged over many textual
// forms of every class against an oracle of this file's own: the registries' refused blocks, the
// globally reachable blocks inside them, and a few lines that read the IPv4 an IPv6 address
// carries. A seeded property test wraps random IPv4 addresses in every IPv6 form; the real server
// refuses the same literals on POST /api/v1/webhooks and accepts loopback only when allowed.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { BlockList } from 'node:net'
import { prng } from '../../src/shared/prng.ts'
import { cidrList } from '../../src/shared/cidr.ts'
import { addressAllowed, parseWebhookUrl } from '../../src/webhooks/url-guard.ts'
import { client, startServer, tenantFixture } from '../support/harness.ts'

/** The operator's allow list the predicate is asked with: empty unless a test sets one. */
let allowed = new BlockList()
const test = suite('webhooks: url guard')

// ---- the oracle
const V4_REFUSED = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
]
const V4_REACHABLE_INSIDE = ['192.0.0.9/32', '192.0.0.10/32']
const V4_REACHABLE = ['192.31.196.0/24', '192.52.193.0/24', '192.175.48.0/24']
const V6_REFUSED = [
  '64:ff9b:1::/48',
  '100::/64',
  '100:0:0:1::/64',
  '2001::/23',
  '2001:db8::/32',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
]
const V6_REACHABLE_INSIDE = ['2001:1::1/128', '2001:1::2/128', '2001:1::3/128', '2001:3::/32', '2001:4:112::/48', '2001:20::/28', '2001:30::/28']
const V6_CARRIERS = ['::/96', '::ffff:0:0/96', '::ffff:0:0:0/96', '64:ff9b::/96', '2002::/16', '2001::/32']

function blockList(cidrs: string[]): BlockList {
  const list = new BlockList()
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/')
    list.addSubnet(network, Number(prefix), network.includes(':') ? 'ipv6' : 'ipv4')
  }
  return list
}

const dotted = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.')
const numberOf = (text: string) => text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0)
const hexPair = (n: number) => `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`

/** The eight groups of an IPv6 literal, read through WHATWG URL's own normalisation. */
function groups(address: string): number[] {
  const host = new URL(`http://[${address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')}]/`).hostname.slice(1, -1)
  const [head, tail] = host.split('::').map((part) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []))
  return tail === undefined ? head : [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

/** The IPv4 addresses an IPv6 address carries, if it is one of the wrapping forms. */
function carriedIpv4(g: number[]): number[] | undefined {
  const last = ((g[6] << 16) | g[7]) >>> 0
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 6) || (zeros(0, 5) && g[5] === 0xffff) || (zeros(0, 4) && g[4] === 0xffff && g[5] === 0)) return [last] // compatible, mapped, SIIT
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [last] // NAT64
  if (g[0] === 0x2002) return [((g[1] << 16) | g[2]) >>> 0] // 6to4
  if (g[0] === 0x2001 && g[1] === 0) return [((g[2] << 16) | g[3]) >>> 0, ~last >>> 0] // Teredo: server, client
  return undefined
}

function oracle(allow: string[] = []): (address: string) => boolean {
  const [v4Refused, v4Inside, v6Refused, v6Inside] = [V4_REFUSED, V4_REACHABLE_INSIDE, V6_REFUSED, V6_REACHABLE_INSIDE].map(blockList)
  const v4Allow = blockList(allow.filter((c) => !c.includes(':')))
  const v6Allow = blockList(allow.filter((c) => c.includes(':')))
  const v4 = (n: number) => v4Allow.check(dotted(n), 'ipv4') || !v4Refused.check(dotted(n), 'ipv4') || v4Inside.check(dotted(n), 'ipv4')
  return (address) => {
    if (!address.includes(':')) return v4(numberOf(address))
    const g = groups(address)
    const text = g.map((x) => x.toString(16)).join(':')
    if (v6Allow.check(text, 'ipv6')) return true
    const carried = carriedIpv4(g)
    if (carried) return carried.every(v4)
    return (g[0] & 0xe000) === 0x2000 && (!v6Refused.check(text, 'ipv6') || v6Inside.check(text, 'ipv6'))
  }
}

// ---- samples
const TEREDO_SERVER = hexPair(numberOf('65.54.227.120'))
const TEREDO_CLIENT_INVERTED = hexPair(~numberOf('8.8.8.8') >>> 0)

/** An IPv4 address in every IPv6 form that carries it (the other Teredo party is public). */
function wrappings(n: number, random: () => number = () => 0.25): string[] {
  const d = dotted(n)
  const h = hexPair(n)
  const pad = (x: number) => x.toString(16).padStart(4, '0').toUpperCase()
  const word = () => Math.floor(random() * 0x10000).toString(16)
  return [
    `::ffff:${d}`,
    `::ffff:${h}`,
    `::FFFF:${h.toUpperCase()}`,
    `0:0:0:0:0:ffff:${pad(n >>> 16)}:${pad(n & 0xffff)}`,
    `0000:0000:0000:0000:0000:FFFF:${d}`,
    `[::ffff:${d}]`,
    `::ffff:${h}%eth0`, // IPv4-mapped
    `::${d}`,
    `::${h}`,
    `0:0:0:0:0:0:${d}`, // IPv4-compatible
    `::ffff:0:${d}`,
    `0:0:0:0:ffff:0:${h}`, // SIIT
    `64:ff9b::${d}`,
    `64:FF9B:0:0:0:0:${h.toUpperCase()}`, // NAT64
    `2002:${h}::`,
    `2002:${h}:${word()}:${word()}:${word()}:${word()}:${word()}`, // 6to4
    `2001:0:${TEREDO_SERVER}:8000:${word()}:${hexPair(~n >>> 0)}`, // Teredo, as the client
    `2001::${h}:0:${word()}:${TEREDO_CLIENT_INVERTED}`, // Teredo, as the server
  ]
}

/** First and last address of a block and the ones just outside it. */
function edges4(cidr: string): number[] {
  const [network, prefix] = cidr.split('/')
  const first = numberOf(network)
  const last = first + 2 ** (32 - Number(prefix)) - 1
  return [first - 1, first, first + 1, last - 1, last, last + 1].filter((n) => n >= 0 && n <= 0xffffffff)
}

function edges6(cidr: string): string[] {
  const [network, prefix] = cidr.split('/')
  const first = groups(network).reduce((n, g) => (n << 16n) | BigInt(g), 0n)
  const last = first + (1n << BigInt(128 - Number(prefix))) - 1n
  const text = (v: bigint) => Array.from({ length: 8 }, (_, i) => ((v >> BigInt(112 - 16 * i)) & 0xffffn).toString(16).padStart(4, '0')).join(':')
  return [first - 1n, first, last, last + 1n].filter((v) => v >= 0n && v < 1n << 128n).map(text)
}

const NAMED: [string, boolean][] = [
  ['127.0.0.1', false],
  ['8.8.8.8', true],
  ['192.0.0.9', true],
  ['192.0.0.8', false],
  ['192.31.196.1', true],
  ['192.88.99.1', false],
  ['255.255.255.255', false],
  ['::ffff:127.0.0.1', false],
  ['::ffff:8.8.8.8', true],
  ['::127.0.0.1', false],
  ['::ffff:0:a9fe:a9fe', false],
  ['64:ff9b::8.8.8.8', true],
  ['64:ff9b:1::808:808', false],
  ['2002:808:808::1', true],
  ['2002:a00:1::1', false],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', false],
  ['2001:0:a00:1:0:0:f7f7:f7f7', false],
  ['2001:1::1', true],
  ['2001:1::4', false],
  ['2001:20::1', true],
  ['2001:4860:4860::8888', true],
  ['2620:4f:8000::1', true],
  ['3fff::1', false],
  ['5f00::1', false],
  ['4000::1', false],
  ['fe80::1%eth0', false],
  ['FD00::1', false],
  ['ff02::1', false],
  ['::', false],
  ['::1', false],
]

test('named cases: the oracle and the predicate both give the expected verdict', () => {
  const expected = oracle()
  for (const [address, verdict] of NAMED) {
    assert.is(expected(address), verdict, `oracle: ${address}`)
    assert.is(addressAllowed(address, allowed), verdict, address)
  }
})

test('every registry block: its edges in every textual form, and every IPv4 one wrapped in every IPv6 form', () => {
  const expected = oracle()
  const v4 = [...V4_REFUSED, ...V4_REACHABLE_INSIDE, ...V4_REACHABLE].flatMap(edges4)
  for (const n of [...v4, numberOf('1.1.1.1'), numberOf('203.0.114.10')]) {
    for (const form of [dotted(n), ...wrappings(n)]) assert.is(addressAllowed(form, allowed), expected(form), form)
  }
  const v6 = [...V6_REFUSED, ...V6_REACHABLE_INSIDE, ...V6_CARRIERS, '2000::/3', '2620:4f:8000::/48'].flatMap(edges6)
  for (const full of [...v6, '2606:4700:4700::1111', '1::1', '100:0:0:2::1']) {
    const short = new URL(`http://[${full}]/`).hostname.slice(1, -1)
    for (const form of [full, full.toUpperCase(), short, `[${short}]`, `${short}%eth0`]) assert.is(addressAllowed(form, allowed), expected(form), form)
  }
})

test('URL forms: WHATWG URL normalises the host first, and the verdict is on the address it yields', () => {
  const expected = oracle()
  const urlVerdict = (url: string) => {
    try {
      parseWebhookUrl(url, allowed)
      return true
    } catch (error) {
      const { code, extra } = error as { code: string; extra: { errors: { field: string }[] } }
      assert.is(code, 'validation_failed', url)
      assert.is(extra.errors[0].field, 'url', url)
      return false
    }
  }
  for (const n of [...V4_REFUSED, ...V4_REACHABLE_INSIDE, ...V4_REACHABLE].flatMap(edges4)) {
    const [a, b, c, d] = dotted(n).split('.').map(Number)
    const hosts = [
      String(n),
      `0x${n.toString(16)}`,
      [a, b, c, d].map((x) => `0${x.toString(8)}`).join('.'),
      `${a}.${b}.${c * 256 + d}`,
      `0x${a.toString(16)}.${b * 65536 + c * 256 + d}`,
      `${dotted(n)}.`,
    ]
    for (const host of hosts) assert.is(urlVerdict(`https://${host}/hook`), expected(dotted(n)), host)
    for (const form of wrappings(n).filter((f) => !f.includes('%')))
      assert.is(urlVerdict(`https://[${form.replace(/^\[|\]$/g, '')}]/`), expected(dotted(n)), form)
  }
})

test('property (seeded): a random IPv4 address gets the same verdict bare and in every IPv6 form', () => {
  const random = prng(0x5eed_0907)
  const insideRefused = [...V4_REFUSED, ...V4_REACHABLE_INSIDE]
  const pick = () => {
    if (random() < 0.5) return Math.floor(random() * 2 ** 32)
    const [network, prefix] = insideRefused[Math.floor(random() * insideRefused.length)].split('/')
    return numberOf(network) + Math.floor(random() * 2 ** (32 - Number(prefix)))
  }
  const run = (count: number, allow: string[]) => {
    const expected = oracle(allow)
    for (let i = 0; i < count; i++) {
      const n = pick()
      const bare = addressAllowed(dotted(n), allowed)
      assert.is(bare, expected(dotted(n)), `${dotted(n)} with ${allow.join(',') || 'no allow list'}`)
      for (const form of wrappings(n, random)) assert.is(addressAllowed(form, allowed), bare, `${form} carries ${dotted(n)}`)
    }
  }
  run(3000, [])
  const allow = ['192.168.0.0/16', '127.0.0.1/32', '100.64.0.0/10']
  allowed = cidrList(allow, '--webhook-allow-cidr')
  try {
    run(1500, allow)
  } finally {
    allowed = new BlockList()
  }
})

test('--webhook-allow-cidr: an allowed IPv4 range allows every IPv6 form carrying it, and nothing else', () => {
  allowed = cidrList(['192.168.0.0/16', 'fd00::/8', '64:ff9b:1::/48'], '--webhook-allow-cidr')
  try {
    for (const address of [
      '192.168.1.5',
      '::ffff:192.168.1.5',
      '::ffff:c0a8:105',
      '::192.168.1.5',
      '64:ff9b::c0a8:105',
      '2002:c0a8:105::1',
      `2001:0:c0a8:105::${TEREDO_CLIENT_INVERTED}`,
      'fd00::5',
      '64:ff9b:1::a00:1',
    ])
      assert.ok(addressAllowed(address, allowed), address)
    for (const address of ['10.0.0.1', '::ffff:10.0.0.1', '2002:a00:1::', '2001:0:c0a8:105:0:0:80ff:fffe', 'fc00::1', '::1', '127.0.0.1']) {
      assert.not.ok(addressAllowed(address, allowed), address)
    }
  } finally {
    allowed = new BlockList()
  }
})

const REFUSED_URLS = [
  'https://[::ffff:127.0.0.1]/',
  'https://[0:0:0:0:0:FFFF:7F00:0001]/',
  'https://[::127.0.0.1]/',
  'https://[::ffff:0:127.0.0.1]/',
  'https://[64:ff9b::10.0.0.1]/',
  'https://[64:ff9b:1::808:808]/',
  'https://[2002:a9fe:a9fe::1]/',
  'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'https://[2001:0:a00:1::f7f7:f7f7]/',
  'https://[3fff::1]/',
  'https://[5f00::1]/',
  'https://[100:0:0:1::1]/',
  'https://[2001:2::1]/',
  'https://[4000::1]/',
  'https://[fec0::1]/',
  'https://0x7f.1/',
  'https://0177.0.0.1/',
  'https://2130706433/',
  'https://192.0.0.8/',
  'https://192.88.99.1/',
  'https://198.18.0.1/',
]

test('the server: refused literals answer 400 validation_failed on url, and nothing is created', async () => {
  const server = await startServer()
  try {
    const api = client(server)
    const key = await (await tenantFixture(server, 'guard')).key(['webhooks:write'])
    for (const url of REFUSED_URLS) {
      const res = await api('POST', '/api/v1/webhooks', { token: key, body: { url } })
      assert.is(res.status, 400, `${url}: ${res.text}`)
      assert.is(res.json.code, 'validation_failed', url)
      assert.is(res.json.errors[0].field, 'url', url)
      assert.match(res.json.detail, /not globally reachable/, url)
    }
    assert.equal((await api('GET', '/api/v1/webhooks', { token: key })).json, [])
  } finally {
    await server.stop()
  }
})

test('the server: with --webhook-allow-cidr 127.0.0.1/32, loopback in mapped form is accepted, 127.0.0.2 is not', async () => {
  // Only 127.0.0.1 is ever registered, at port 9 where nothing listens: nothing can leave this machine.
  const server = await startServer({ args: ['--webhook-allow-cidr', '127.0.0.1/32'] })
  try {
    const api = client(server)
    const key = await (await tenantFixture(server, 'guard')).key(['webhooks:write'])
    const mapped = await api('POST', '/api/v1/webhooks', { token: key, body: { url: 'https://[::ffff:127.0.0.1]:9/hook' } })
    assert.is(mapped.status, 200, mapped.text)
    assert.is(mapped.json.url, 'https://[::ffff:7f00:1]:9/hook')
    const numeric = await api('POST', '/api/v1/webhooks', { token: key, body: { url: 'https://2130706433:9/hook' } })
    assert.is(numeric.status, 200, numeric.text)
    assert.is(numeric.json.url, 'https://127.0.0.1:9/hook')
    for (const url of ['https://[::ffff:127.0.0.2]:9/', 'https://127.0.0.2:9/', 'https://[::ffff:10.0.0.1]:9/']) {
      const res = await api('POST', '/api/v1/webhooks', { token: key, body: { url } })
      assert.is(res.status, 400, `${url}: ${res.text}`)
      assert.is(res.json.errors[0].field, 'url', url)
    }
    const patched = await api('PATCH', `/api/v1/webhooks/${mapped.json.id}`, { token: key, body: { url: 'https://[::ffff:7f00:2]:9/' } })
    assert.is(patched.status, 400, patched.text)
    const list = (await api('GET', '/api/v1/webhooks', { token: key })).json as { url: string }[]
    assert.equal(list.map((hook) => hook.url).sort(), ['https://127.0.0.1:9/hook', 'https://[::ffff:7f00:1]:9/hook'])
  } finally {
    await server.stop()
  }
})

test.run()
