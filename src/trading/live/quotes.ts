// The venue's price a LIVE order is checked at (SPEC 10: "every pre-trade limit is checked at the
// venue's price, its mark if at most 60 s old, else read then"). Read before the order's
// transaction, since a network call never runs inside one; the price read is saved as the pair's
// mark in the order's own transaction, so the next order within a minute needs no call.
import { DomainError } from '../../shared/errors.ts'
import { loadCcxt } from '../../venues/ccxt-loader.ts'
import { venueError } from '../../venues/exchange.ts'
import type { Queries, Tx } from '../../store/store.ts'
import { FRESH_MARK_MS, findFreshMark, saveMark } from '../../venues/marks.ts'
import type { VenueSessions } from '../../venues/sessions.ts'

/** A price of the venue and when it was read (fresh: read now, not a stored mark). */
export interface VenueQuote {
  price: number
  at: Date
  fresh: boolean
}

export interface VenueQuotes {
  /**
   * The venue's price of `pair` for the tenant's next order: a mark at most 60 s old, else the
   * venue's last price, read now. Throws 503 venue_unavailable when the venue does not answer, 422
   * venue_rejected when it has no such market.
   */
  quote(db: Queries, tenantId: string, pair: string, now: Date): Promise<VenueQuote>
  /** Keeps a price read now as the pair's mark, in the order's transaction. */
  remember(tx: Tx, tenantId: string, pair: string, quote: VenueQuote): Promise<void>
}

/**
 * Price quotes through the tenant's venue session.
 *
 * @example
 * const quotes = venueQuotes(sessions)
 * const { price } = await quotes.quote(ctx.db, tenantId, 'BTC/USDT', new Date()) // 65012.5
 */
export function venueQuotes(sessions: VenueSessions): VenueQuotes {
  return {
    async quote(db, tenantId, pair, now) {
      const mark = await findFreshMark(db, tenantId, pair, FRESH_MARK_MS, now)
      if (mark !== undefined) return { price: mark, at: now, fresh: false }
      let session: Awaited<ReturnType<VenueSessions['open']>>
      try {
        session = await sessions.open(db, tenantId)
      } catch (error) {
        throw unavailable(`the venue could not be opened to price this order: ${(error as Error).message}`)
      }
      const exchange = session.quotes
      try {
        const ticker = await exchange.fetchTicker(pair)
        const price = ticker.last ?? ticker.close
        if (!(typeof price === 'number' && price > 0)) throw unavailable(`${exchange.id} gave no last price for ${pair}`)
        return { price, at: new Date(), fresh: true }
      } catch (error) {
        if (error instanceof DomainError) throw error
        const ccxt = await loadCcxt()
        if (error instanceof ccxt.BadSymbol) throw new DomainError('venue_rejected', `${exchange.id} has no market ${pair}; the order was not sent`)
        throw unavailable(`${exchange.id} could not be reached to price this order: ${venueError(exchange, error).reason}`)
      }
    },
    async remember(tx, tenantId, pair, quote) {
      if (quote.fresh) await saveMark(tx, tenantId, pair, quote.price, quote.at)
    },
  }
}

function unavailable(detail: string): DomainError {
  return new DomainError('venue_unavailable', `${detail}; nothing was placed`, { headers: { 'Retry-After': '5' } })
}
