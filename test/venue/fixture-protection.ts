// Shared by the protection tests (SPEC 13): the market's rounding, done here with the test's own
// arithmetic rather than ccxt's.

/**
 * `value` on the grid of `step`: to the nearest (prices, as ccxt's priceToPrecision rounds) or down
 * (quantities, which are never rounded up past what is held).
 *
 * @example
 * roundTo(57000.123, 0.01) // 57000.12
 */
export function roundTo(value: number, step: number, mode: 'nearest' | 'down' = 'nearest'): number {
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9))
  const units = value / step
  const whole = mode === 'down' ? Math.floor(units + 1e-9) : Math.round(units)
  return Number((whole * step).toFixed(digits))
}
