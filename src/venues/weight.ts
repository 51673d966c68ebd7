// The venue's request budget as this process sees it (SPEC 10, 13). Binance counts REQUEST_WEIGHT per
// IP and minute, and every tenant of one server shares that IP: a client that keeps calling after a
// 429 is banned (418) for minutes to days. So the reads that only watch (the order poll, the
// protection poll) give way: they wait out a Retry-After for every lane of the exchange, and they
// pause while the venue reports more than half of its minute's weight used (X-MBX-USED-WEIGHT-1M),
// which leaves the other half to orders, cancels and reconciliation. In memory, per exchange id.
import { type Exchange, venueError } from './exchange.ts'

/** Binance spot's REQUEST_WEIGHT a minute per IP (GET /api/v3/exchangeInfo rateLimits). */
const WEIGHT_PER_MINUTE = 6000
/** Watching reads stop at this share of the minute's weight. */
const WATCH_SHARE = 0.5

interface Budget {
  used: number
  seenAt: number
  coolUntil: number
}

const budgets = new Map<string, Budget>()

function budgetOf(exchangeId: string): Budget {
  let budget = budgets.get(exchangeId)
  if (!budget) {
    budget = { used: 0, seenAt: 0, coolUntil: 0 }
    budgets.set(exchangeId, budget)
  }
  return budget
}

/** Reads the weight the venue says this IP used, from the instance's last answer. */
export function noteWeight(exchange: Exchange): void {
  const headers = (exchange as { last_response_headers?: Record<string, string> }).last_response_headers
  if (!headers) return
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-mbx-used-weight-1m')
  const used = Number(entry?.[1])
  if (!Number.isFinite(used)) return
  const budget = budgetOf(exchange.id)
  budget.used = used
  budget.seenAt = Date.now()
}

/** What a failed watching read says of the budget: a 429 or 418 (ccxt's RateLimitExceeded, DDoSProtection) cools the exchange. */
export function noteLimits(exchange: Exchange, error: unknown): void {
  noteWeight(exchange)
  const name = (error as { name?: string } | null)?.name
  if (name !== 'RateLimitExceeded' && name !== 'DDoSProtection') return
  const { retryAfterSeconds } = venueError(exchange, error)
  noteRateLimited(exchange.id, retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : 60_000)
}

/** A 429 (or 418) asked every caller to wait `waitMs`: watching reads of the exchange stop until then. */
export function noteRateLimited(exchangeId: string, waitMs: number): void {
  const budget = budgetOf(exchangeId)
  budget.coolUntil = Math.max(budget.coolUntil, Date.now() + waitMs)
}

/**
 * Whether a read that only watches (a poll) may go to the exchange now.
 *
 * @example
 * if (mayWatch('binance')) await readOpenOrders(exchange, pairs)
 */
export function mayWatch(exchangeId: string, now = Date.now()): boolean {
  const budget = budgets.get(exchangeId)
  if (!budget) return true
  if (now < budget.coolUntil) return false
  // The venue's count is per clock minute: a reading from an earlier minute says nothing of this one.
  const sameMinute = Math.floor(budget.seenAt / 60_000) === Math.floor(now / 60_000)
  return !sameMinute || budget.used < WEIGHT_PER_MINUTE * WATCH_SHARE
}
