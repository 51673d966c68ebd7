// How each exchange this process talks to is doing, for /health (SPEC 10): "degraded" while the
// latest round of calls of any of its callers (the market data feed, each tenant's executor lane)
// met a refusal to connect, a timeout, a 5xx or a 429; "ok" once each caller's latest round got all
// its answers. Kept per caller, so that one tenant's answered round never hides another's failure a
// moment before. A failure older than FORGET_AFTER_MS no longer counts: its caller has called
// nothing since (a tenant with nothing to do, or disconnected), and one still failing notes it
// again on every pass. In memory: this process's own recent experience, not a stored fact.
const FORGET_AFTER_MS = 30_000
const seen = new Map<string, Map<string, { ok: boolean; at: number }>>()

/**
 * Records the outcome of one round of calls to `exchange` by `caller` (a market data fetch, one
 * tenant's executor pass).
 *
 * @example
 * noteVenue('binance', false, 'ten_1') // /health: binance degraded until ten_1's next round answers
 */
export function noteVenue(exchange: string, ok: boolean, caller = 'default'): void {
  let callers = seen.get(exchange)
  if (!callers) {
    callers = new Map()
    seen.set(exchange, callers)
  }
  callers.set(caller, { ok, at: Date.now() })
}

/** Every exchange reached since start, by ccxt id. */
export function venueStatuses(now = Date.now()): Record<string, 'ok' | 'degraded'> {
  const status = (callers: Map<string, { ok: boolean; at: number }>) =>
    [...callers.values()].some((c) => !c.ok && now - c.at < FORGET_AFTER_MS) ? 'degraded' : 'ok'
  return Object.fromEntries([...seen].sort(([a], [b]) => (a < b ? -1 : 1)).map(([exchange, callers]) => [exchange, status(callers)]))
}
