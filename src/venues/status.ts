// How each exchange this process talks to is doing, for /health (SPEC 10): "ok" after a round of
// calls that all got answers, "degraded" after one that met a refusal to connect, a timeout, a 5xx
// or a 429. In memory: it describes this process's own recent experience, not a stored fact.
const seen = new Map<string, 'ok' | 'degraded'>()

/** Records the outcome of one round of calls to `exchange` (a market data fetch, an executor pass). */
export function noteVenue(exchange: string, ok: boolean): void {
  seen.set(exchange, ok ? 'ok' : 'degraded')
}

/** Every exchange reached since start, by ccxt id. */
export function venueStatuses(): Record<string, 'ok' | 'degraded'> {
  return Object.fromEntries([...seen].sort(([a], [b]) => (a < b ? -1 : 1)))
}
