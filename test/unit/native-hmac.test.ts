// ccxt's signatures through Node's HMAC (src/venues/native-hmac.ts): byte for byte what ccxt's own
// HMAC writes, on Binance (sha256, hex) and on exchanges that sign otherwise (sha512 and base64,
// sha384); ccxt's own HMAC runs only for the probe of each hash and encoding.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import ccxt from 'ccxt'
import { useNativeHmac } from '../../src/venues/native-hmac.ts'

const test = suite('unit: native HMAC for ccxt')

type Signing = {
  hmac: (...args: unknown[]) => unknown
  sign: (path: string, api: unknown, method: string, params: object) => { url: string; body?: string; headers?: Record<string, string> }
}
const SECRET = 'NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j'

function binance(): Signing {
  const exchange = new ccxt.binance({ apiKey: 'key', secret: SECRET, options: { recvWindow: 5000 } })
  exchange.nonce = () => 1_700_000_000_000
  return exchange as unknown as Signing
}

test("Binance's signature: Node's HMAC-SHA256 of the signed text, and ccxt's own only for the probe", () => {
  const exchange = binance()
  let ccxtCalls = 0
  const own = exchange.hmac
  exchange.hmac = (...args: unknown[]) => {
    ccxtCalls++
    return own(...args)
  }
  useNativeHmac(exchange as never)
  for (let i = 0; i < 5; i++) {
    const params = { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: `0.00${i + 1}`, price: '60000', newClientOrderId: `ord_${i}` }
    const { body } = exchange.sign('order', 'private', 'POST', params)
    const [signed, signature] = body!.split('&signature=')
    // The oracle: the HMAC Binance's documentation describes, computed here.
    assert.is(signature, createHmac('sha256', SECRET).update(signed).digest('hex'))
  }
  assert.is(ccxtCalls, 1, 'ccxt signed the probe only')
})

test('a secret changed on the instance signs with the new secret at once (the prepared key is not kept past it)', () => {
  const exchange = binance() as Signing & { secret: string }
  useNativeHmac(exchange as never)
  const other = `${SECRET.slice(1)}x`
  for (const secret of [SECRET, other, SECRET]) {
    exchange.secret = secret
    const { body } = exchange.sign('order', 'private', 'POST', { symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.5' })
    const [signed, signature] = body!.split('&signature=')
    assert.is(signature, createHmac('sha256', secret).update(signed).digest('hex'))
  }
})

test("other exchanges' signatures are ccxt's own, byte for byte (sha512 and base64, sha384)", () => {
  for (const id of ['kraken', 'bitfinex', 'kucoin', 'okx', 'coinbaseexchange']) {
    const make = () => {
      const Class = (ccxt as unknown as Record<string, new (config: object) => Signing & { nonce: () => number; milliseconds: () => number }>)[id]
      const exchange = new Class({ apiKey: 'key', secret: Buffer.from(SECRET).toString('base64'), password: 'pass' })
      exchange.nonce = () => 1_700_000_000_000
      exchange.milliseconds = () => 1_700_000_000_000
      return exchange
    }
    const plain = make()
    const native = make()
    useNativeHmac(native as never)
    const path = { kraken: 'Balance', bitfinex: 'auth/r/wallets', kucoin: 'accounts', okx: 'account/balance', coinbaseexchange: 'accounts' }[id]!
    const method = id === 'kraken' || id === 'bitfinex' ? 'POST' : 'GET'
    assert.equal(native.sign(path, 'private', method, {}), plain.sign(path, 'private', method, {}), id)
  }
})

test.run()
