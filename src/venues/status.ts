// How each exchange this process talks to is doing, for /health (SPEC 10): "degraded" for a while
// after any round of calls that met a refusal to connect, a timeout, a 5xx or a 429, "ok" once
// rounds have gone by that all got answers (it stays degraded while the latest round failed). Several lanes (tenants) call one exchange: one lane's
// answered round must not hide another's failure a moment before, so a failure holds for
// DEGRADED_FOR_MS. In memory: this process's own recent experience, not a stored fact.
const DEGRADED_FOR_MS = 10_000
const seen = new Map<string, { answeredAt: number; failedAt: number }>()

/** Records the outcome of one round of calls to `exchange` (a market data fetch, an executor pass). */
export function noteVenue(exchange: string, ok: boolean): void {
  const entry = seen.get(exchange) ?? { answeredAt: 0, failedAt: 0 }
  if (ok) entry.answeredAt = Date.now()
  else entry.failedAt = Date.now()
  seen.set(exchange, entry)
}

/** Every exchange reached since start, by ccxt id. */
export function venueStatuses(now = Date.now()): Record<string, 'ok' | 'degraded'> {
  // Degraded while the latest round failed, and for a while after any failure.
  const status = ({ answeredAt, failedAt }: { answeredAt: number; failedAt: number }) =>
    failedAt > 0 && (failedAt >= answeredAt || now - failedAt < DEGRADED_FOR_MS) ? 'degraded' : 'ok'
  return Object.fromEntries([...seen].sort(([a], [b]) => (a < b ? -1 : 1)).map(([exchange, entry]) => [exchange, status(entry)]))
}
