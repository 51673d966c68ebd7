// A bot trading through the gateway (SPEC 14) waits for the venue's answer to each order, and most
// of its orders come after some quiet. By then the venue has closed the idle connection (a Node
// server announces 5 s, and undici lets a connection go a second before that), so the order paid a
// new TCP and TLS handshake first: 4-6 ms on one machine, two or three round trips over the
// internet. And past a minute of quiet, the pair's mark is stale, so the order read the venue's
// price first (SPEC 10). For WARM_FOR_MS after a tenant's last order, its lane reads the prices of
// the pairs it traded whenever it has made no call for WARM_EVERY_MS: the connection stays open and
// the marks fresh. A read that watches, it gives way to the venue's weight like the polls
// (venues/weight.ts): about 60 of Binance's 6000 a minute per trading tenant.
import type { Store } from '../../store/store.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { saveMark } from '../../venues/marks.ts'
import { noteLimits } from '../../venues/weight.ts'

/** A lane that made no venue call for this long reads its prices: a pass comes every 1-2 s, so the read comes before undici lets the connection go (at 4 s of idle against a Node server). */
export const WARM_EVERY_MS = 2000
/** How long after a tenant's last order its lane keeps the venue warm. */
export const WARM_FOR_MS = 10 * 60_000

/** One lane's memory of what it traded lately and when it last called the venue. */
export class Warmth {
  private readonly pairs = new Map<string, number>()
  private calledAt = 0

  /** An order of `pair` moved now. */
  traded(pair: string, now: number): void {
    this.pairs.set(pair, now)
    this.calledAt = now
  }

  /** The lane called the venue now. */
  called(now: number): void {
    this.calledAt = now
  }

  /**
   * The pairs whose prices keep the venue warm now; none while the lane called it lately or traded
   * nothing for WARM_FOR_MS.
   *
   * @example
   * warmth.traded('BTC/USDT', t)
   * warmth.due(t + 1000) // []
   * warmth.due(t + 3000) // ['BTC/USDT']
   */
  due(now: number): string[] {
    for (const [pair, at] of this.pairs) if (now - at > WARM_FOR_MS) this.pairs.delete(pair)
    return this.pairs.size > 0 && now - this.calledAt >= WARM_EVERY_MS ? [...this.pairs.keys()] : []
  }
}

/** Reads the venue's last price of `pairs` and keeps them as the tenant's marks; a failure of either is let go. */
export async function keepWarm(store: Store, tenantId: string, exchange: Exchange, pairs: string[]): Promise<void> {
  let tickers: Awaited<ReturnType<Exchange['fetchTickers']>>
  try {
    tickers = pairs.length === 1 ? { [pairs[0]]: await exchange.fetchTicker(pairs[0]) } : await exchange.fetchTickers(pairs)
  } catch (error) {
    // Not logged: a venue that does not answer is the lane's passes' to report, every few seconds.
    noteLimits(exchange, error)
    return
  }
  const now = new Date()
  // Best effort too: a database another process holds (a backup, a CLI) must not show the venue failing.
  await store
    .write(async (tx) => {
      for (const pair of pairs) {
        const last = tickers[pair]?.last
        if (last !== undefined && last > 0) await saveMark(tx, tenantId, pair, last, now)
      }
    })
    .catch(() => {})
}
