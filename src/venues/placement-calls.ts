// The calls placement.ts makes to a venue, and what their failures mean for an order. The one
// question behind every branch: did the venue act on the request? A refusal with a code, a 429 and
// a clock-skew refusal are answers (nothing was done); a refused connection never reached anyone;
// everything else without an answer (timeout, dropped connection, 5xx, an unreadable body) may have
// been done, and only the venue's own record of the client order id can tell.
import type { Market, Order } from 'ccxt'
import { loadCcxt } from './ccxt-loader.ts'
import { venueError, type Exchange } from './exchange.ts'

// node:timers/promises at the first wait, not at every start.
const sleep = (ms: number) => process.getBuiltinModule('node:timers/promises').setTimeout(ms)

export interface CallOptions {
  /** Sends of the same request (and lookups after them) before giving up; default 3. */
  attempts?: number
  /** The first pause before a resend after a refused connection, doubled each time; default 1000. */
  backoffMs?: number
  /** The most this call may spend waiting out 429s (Retry-After) in all; default 30000. */
  maxWaitMs?: number
  /** When the order was last (maybe) sent, in ms since the epoch, if an earlier pass knows it. */
  sentAt?: number
  /**
   * Asks the venue its time and signs with it from then on (VenueSession.resyncClock): a request
   * refused for its timestamp (-1021) is sent once more after it.
   */
  resyncClock?: () => Promise<void>
}

export type Failure =
  /** 429 or 418: refused, nothing done; `waitMs` is what the venue asked for. */
  | { kind: 'limited'; reason: string; waitMs: number }
  /** The venue refused the request's timestamp (-1021): nothing done, and a resend would be refused too. */
  | { kind: 'skew'; reason: string }
  /** The venue answered no, with its own code. */
  | { kind: 'refused'; reason: string; notFound: boolean; duplicate: boolean }
  /** The connection was refused: the request reached nobody. */
  | { kind: 'unsent'; reason: string }
  /** No answer: the venue may have done it. */
  | { kind: 'unknown'; reason: string }

export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure }

export type Lookup = { found: Order } | { missing: true } | { failed: Failure }

type Ccxt = Awaited<ReturnType<typeof loadCcxt>>

/**
 * What a stop or take-profit order waits for (Binance spot's STOP_LOSS and TAKE_PROFIT, and their
 * _LIMIT forms): the venue holds it until its price falls (STOP_LOSS) or rises (TAKE_PROFIT) to `price`.
 */
export interface Trigger {
  kind: 'STOP_LOSS' | 'TAKE_PROFIT'
  price: number
}

/**
 * Why the market does not take an order of `type` with `trigger` (its exchangeInfo orderTypes, where
 * ccxt keeps them, lack the venue's type), or undefined. A market that lists no types takes it.
 *
 * @example
 * triggerRefusal(market, 'market', { kind: 'STOP_LOSS', price: 60000 }) // 'STOP_LOSS orders are not offered on BTC/USDT'
 */
export function triggerRefusal(market: NonNullable<Market>, type: 'market' | 'limit', trigger: Trigger): string | undefined {
  const venueType = `${trigger.kind}${type === 'limit' ? '_LIMIT' : ''}`
  const types = (market.info as { orderTypes?: unknown })?.orderTypes
  if (!Array.isArray(types) || types.includes(venueType)) return undefined
  return `${venueType} orders are not offered on ${market.symbol} (its order types: ${types.join(', ')})`
}

/**
 * ccxt's createOrder params for a trigger: binance makes a 'limit' order with stopLossPrice a
 * STOP_LOSS_LIMIT (takeProfitPrice: TAKE_PROFIT_LIMIT), a 'market' one a STOP_LOSS (TAKE_PROFIT),
 * and sends the price as stopPrice at the market's tick (as the protections place theirs).
 */
export function triggerParams(trigger: Trigger | undefined): Record<string, number> {
  if (!trigger) return {}
  return trigger.kind === 'STOP_LOSS' ? { stopLossPrice: trigger.price } : { takeProfitPrice: trigger.price }
}

/**
 * Beyond Binance's recvWindow the venue refuses a request (its matching engine checks it again),
 * and it accepts timestamps up to 1 s ahead of its clock: past sentAt + recvWindow + this margin, a
 * request that got no answer can no longer be acted on, so "not found" is final.
 */
const SETTLE_MARGIN_MS = 2000
/** Exchanges without a recvWindow: how long a request may be in flight, at a guess. */
const SETTLE_DEFAULT_MS = 10_000

export class VenueCalls {
  /** Some call met no answer, a refused connection, a 429 or a clock refusal. */
  unanswered = false
  readonly attempts: number
  private readonly backoffMs: number
  private readonly maxWaitMs: number
  private readonly resyncClock?: () => Promise<void>
  private waitedMs = 0

  private constructor(
    readonly exchange: Exchange,
    private readonly ccxt: Ccxt,
    options: CallOptions,
  ) {
    this.attempts = Math.max(1, options.attempts ?? 3)
    this.backoffMs = options.backoffMs ?? 1000
    this.maxWaitMs = options.maxWaitMs ?? 30_000
    this.resyncClock = options.resyncClock
  }

  static async open(exchange: Exchange, options: CallOptions): Promise<VenueCalls> {
    return new VenueCalls(exchange, await loadCcxt(), options)
  }

  classify(error: unknown): Failure {
    const { ccxt } = this
    const detail = venueError(this.exchange, error)
    const reason = detail.reason
    // ccxt turns -2015 into DDoSProtection once the key has worked: it is still a refusal of the key.
    const limited = (error instanceof ccxt.DDoSProtection || error instanceof ccxt.RateLimitExceeded) && detail.code !== -2015
    if (limited) return { kind: 'limited', reason, waitMs: detail.retryAfterSeconds === undefined ? this.backoffMs : detail.retryAfterSeconds * 1000 }
    if (error instanceof ccxt.InvalidNonce) return { kind: 'skew', reason }
    if (error instanceof ccxt.ExchangeError || error instanceof ccxt.DDoSProtection) {
      const notFound = error instanceof ccxt.OrderNotFound
      return { kind: 'refused', reason, notFound, duplicate: detail.code === -2010 && /duplicate order/i.test(detail.message) }
    }
    if (/ECONNREFUSED/.test(reason)) return { kind: 'unsent', reason }
    return { kind: 'unknown', reason }
  }

  /**
   * One call, 429s waited out (Retry-After) while the budget lasts, and once more after the clock
   * was set by the venue's when it refused the timestamp; other failures returned.
   */
  async run<T>(call: () => Promise<T>): Promise<Result<T>> {
    let resynced = false
    for (let tries = 1; ; tries++) {
      try {
        return { ok: true, value: await call() }
      } catch (error) {
        const failure = this.classify(error)
        if (failure.kind !== 'refused') this.unanswered = true
        if (failure.kind === 'skew' && this.resyncClock && !resynced) {
          resynced = true
          // The venue refused the request for its timestamp: nothing was done, so it may go again.
          if (await this.resync()) continue
          return { ok: false, failure }
        }
        if (failure.kind !== 'limited' || tries >= this.attempts || this.waitedMs + failure.waitMs > this.maxWaitMs) return { ok: false, failure }
        this.waitedMs += failure.waitMs
        await sleep(failure.waitMs)
      }
    }
  }

  /** Sets the clock by the venue's; false when the venue's time could not be read. */
  private async resync(): Promise<boolean> {
    try {
      await this.resyncClock!()
      return true
    } catch {
      return false
    }
  }

  /** The pause before resend number `attempt + 1` of a request that reached nobody. */
  async backoff(attempt: number): Promise<void> {
    await sleep(this.backoffMs * 2 ** (attempt - 1))
  }

  /**
   * The venue's order with this client order id. A "not found" within the settle time of `sentAt`
   * is asked again once it has passed: the request may still have been on its way.
   */
  async lookUp(symbol: string, clientOrderId: string, sentAt?: number): Promise<Lookup> {
    for (;;) {
      const found = await this.run(() => this.exchange.fetchOrder('', symbol, { clientOrderId }))
      if (found.ok) return { found: found.value }
      const { failure } = found
      if (failure.kind !== 'refused' || !failure.notFound) return { failed: failure }
      const settled = sentAt === undefined ? 0 : sentAt + this.settleMs()
      if (Date.now() >= settled) return { missing: true }
      await sleep(settled - Date.now())
    }
  }

  private settleMs(): number {
    const recvWindow = Number(this.exchange.options?.recvWindow)
    return Number.isFinite(recvWindow) && recvWindow > 0 ? recvWindow + SETTLE_MARGIN_MS : SETTLE_DEFAULT_MS
  }
}
