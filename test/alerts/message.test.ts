// An alert's message read as TradingView's placeholders write it (SPEC 16): pairs without a slash
// split at a known quote currency, numbers as strings, {{timenow}}'s ISO time or epoch
// milliseconds; every refusal names its field. The expected values are written out by hand.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseAlert, readEnvelope, readPair, secretMatches, staleness, withoutSecret } from '../../src/alerts/message.ts'
import { DomainError } from '../../src/shared/errors.ts'

const test = suite('alerts: the message')

function refusal(fn: () => unknown): DomainError {
  try {
    fn()
  } catch (error) {
    if (error instanceof DomainError) return error
    throw error
  }
  throw new Error('expected a refusal')
}

test('pairs: BASE/QUOTE as given, or split at the longest known quote', () => {
  const cases: [string, string][] = [
    ['BTC/USDT', 'BTC/USDT'],
    ['btc/usdt', 'BTC/USDT'],
    ['BTCUSDT', 'BTC/USDT'],
    [' ethusdc ', 'ETH/USDC'],
    ['ETHTUSD', 'ETH/TUSD'],
    ['BTCFDUSD', 'BTC/FDUSD'],
    ['ETHBTC', 'ETH/BTC'],
    ['SOLEUR', 'SOL/EUR'],
    ['1000SATSUSDT', '1000SATS/USDT'],
  ]
  for (const [given, pair] of cases) assert.is(readPair(given), pair, given)
  for (const bad of ['XYZ', 'USDT', 'BTC-USDT', 'BTC/USDT/X', 'BINANCE:BTCUSDT', 'BTCUSDT.P', '', 42]) {
    const error = refusal(() => readPair(bad))
    assert.is(error.code, 'validation_failed')
    assert.equal(error.extra.errors?.[0].field, 'pair', String(bad))
  }
})

test('a message: sides in any case, numbers as strings, the type defaulting to market', () => {
  assert.equal(parseAlert({ id: 'a', pair: 'BTCUSDT', side: 'Buy', quantity: '0.015' }), {
    id: 'a',
    pair: 'BTC/USDT',
    side: 'BUY',
    type: 'MARKET',
    quantity: 0.015,
  })
  assert.equal(parseAlert({ id: 7, pair: 'ETH/USDT', side: 'SELL', type: 'LIMIT', price: '3000.5', notional_usd: 250 }), {
    id: '7',
    pair: 'ETH/USDT',
    side: 'SELL',
    type: 'LIMIT',
    price: 3000.5,
    notional_usd: 250,
  })
  assert.equal(parseAlert({ id: 'c', pair: 'BTCUSDT', side: 'sell' }), { id: 'c', pair: 'BTC/USDT', side: 'SELL', type: 'MARKET' })
  assert.is(parseAlert({ id: 'd', pair: 'BTCUSDT', side: 'sell', timestamp: '2024-01-31T12:00:00Z' }).timestampMs, Date.UTC(2024, 0, 31, 12))
  assert.is(parseAlert({ id: 'e', pair: 'BTCUSDT', side: 'sell', timestamp: '2024-01-31T13:00:00+01:00' }).timestampMs, Date.UTC(2024, 0, 31, 12))
  assert.is(parseAlert({ id: 'f', pair: 'BTCUSDT', side: 'sell', timestamp: 1706702400000 }).timestampMs, Date.UTC(2024, 0, 31, 12))
  assert.is(parseAlert({ id: 'g', pair: 'BTCUSDT', side: 'sell', timestamp: '1706702400000' }).timestampMs, Date.UTC(2024, 0, 31, 12))
})

test('refusals name their field', () => {
  const base = { id: 'x', pair: 'BTCUSDT', side: 'buy', quantity: 1 }
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, id: '' }, 'id'],
    [{ ...base, id: 'x'.repeat(129) }, 'id'],
    [{ ...base, side: 'long' }, 'side'],
    [{ ...base, type: 'stop' }, 'type'],
    [{ ...base, quantity: '1,5' }, 'quantity'],
    [{ ...base, quantity: 0 }, 'quantity'],
    [{ ...base, quantity: '1e13' }, 'quantity'],
    [{ ...base, quantity: undefined }, 'quantity'],
    [{ ...base, notional_usd: 10 }, 'quantity'],
    [{ ...base, type: 'limit' }, 'price'],
    [{ ...base, price: 10 }, 'price'],
    [{ ...base, timestamp: '2024-01-31 12:00:00' }, 'timestamp'],
    [{ ...base, timestamp: 1706702400 }, 'timestamp'],
    [{ ...base, timestamp: -5 }, 'timestamp'],
    [{ ...base, ticker: 'BTCUSDT' }, 'ticker'],
  ]
  for (const [message, field] of cases) {
    const error = refusal(() => parseAlert(message))
    assert.equal(error.extra.errors?.[0].field, field, `${JSON.stringify(message)}: ${error.detail}`)
    assert.match(error.detail, new RegExp(`\\b${field}\\b`))
  }
})

test('the body: any JSON object whatever its type; the secret compared whole and kept out of the log', () => {
  const envelope = readEnvelope(Buffer.from('{"secret":"s3cret","id":"a"}'))
  assert.ok(secretMatches(envelope, 's3cret'))
  assert.not.ok(secretMatches(envelope, 's3cre'))
  assert.not.ok(secretMatches(envelope, 's3cret '))
  assert.not.ok(secretMatches({ secret: 5 }, '5'))
  assert.is(withoutSecret(envelope), '{"id":"a"}')
  for (const body of ['', ' ', 'nope', '[]', 'null', '{"a":1']) {
    const error = refusal(() => readEnvelope(Buffer.from(body)))
    assert.is(error.code, 'invalid_json', body)
    assert.equal(error.extra.errors?.[0].field, 'body')
  }
  assert.is(refusal(() => readEnvelope(Buffer.from([0x7b, 0xff, 0x7d]))).code, 'invalid_json')
})

test('staleness: older than max_age_seconds, or more than 5 s ahead of the clock', () => {
  const now = new Date(Date.UTC(2024, 0, 31, 12))
  const at = (offsetMs: number) => ({ id: 'a', pair: 'BTC/USDT', side: 'BUY' as const, type: 'MARKET' as const, timestampMs: now.getTime() + offsetMs })
  assert.is(staleness(at(-60_000), 60, now), undefined)
  assert.is(staleness(at(-60_001), 60, now)?.code, 'alert_stale')
  assert.is(staleness(at(5_000), 60, now), undefined)
  assert.is(staleness(at(5_001), 60, now)?.code, 'alert_stale')
  assert.is(staleness({ ...at(0), timestampMs: undefined }, 60, now), undefined)
})

test.run()
