// Comparisons of the service's performance figures with the oracle's, to 1e-9.
import * as assert from 'uvu/assert'

export function close(actual: unknown, expected: unknown, what: string): void {
  if (expected === null || actual === null) {
    assert.is(actual, expected, `${what}: ${actual} != ${expected}`)
    return
  }
  assert.type(actual, 'number', what)
  const a = actual as number
  const e = expected as number
  assert.ok(Number.isFinite(a), `${what} is finite`)
  assert.ok(Math.abs(a - e) <= 1e-9 * Math.max(1, Math.abs(e)), `${what}: ${a} != ${e}`)
}

/** Every figure of `metrics` (benchmark included) against the oracle's, and no extra figure. */
export function sameMetrics(actual: any, expected: any, what = 'metrics'): void {
  assert.equal(Object.keys(actual).sort(), Object.keys(expected).sort(), `${what}: the same figures`)
  for (const [name, value] of Object.entries(expected)) {
    if (name === 'benchmark') sameMetrics(actual.benchmark, value, `${what}.benchmark`)
    else close(actual[name], value, `${what}.${name}`)
  }
}

export function sameCurve(actual: any[], expected: any[], what = 'equity'): void {
  assert.is(actual.length, expected.length, `${what}: points`)
  expected.forEach((point, i) => {
    assert.is(actual[i].date, point.date, `${what}[${i}].date`)
    for (const field of ['equity', 'drawdown', 'benchmark']) close(actual[i][field], point[field], `${what}[${i}].${field} (${point.date})`)
  })
}

export function samePositions(actual: any[], expected: any[]): void {
  assert.is(actual.length, expected.length, 'positions')
  expected.forEach((p, i) => {
    assert.is(actual[i].pair, p.pair, `positions[${i}].pair`)
    assert.is(actual[i].entry_date, p.entry_date, `positions[${i}].entry_date`)
    assert.is(actual[i].exit_date, p.exit_date, `positions[${i}].exit_date`)
    for (const field of ['entry_price', 'exit_price', 'return']) close(actual[i][field], p[field], `positions[${i}].${field}`)
  })
}
