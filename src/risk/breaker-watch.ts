// When the breakers are evaluated besides an order placement (SPEC 9): in a price import's
// transaction, for every tenant the new prices touch (an open trade of an imported pair, or a trade
// the import's fills closed), and once a minute for every tenant, which also writes the equity
// history of the UTC days that ended (caught up at start for the days the service was down).
import { statement, write } from '../store/db.ts'
import { log } from '../shared/log.ts'
import type { Service } from '../store/service.ts'
import type { PriceListener } from '../market/prices.ts'
import { isBusy } from '../store/write-queue.ts'
import { evaluateBreakers } from './breakers.ts'

const TICK_MS = 60_000
const FIRST_TICK_MS = 1_000
/** Tenants per transaction in the minute tick: short transactions, so requests keep their turn. */
const BATCH = 100

const touchedTenants = statement<[string, string], { tenant_id: string }>(`
  SELECT DISTINCT tenant_id FROM trades WHERE status = 'OPEN' AND pair IN (SELECT value FROM json_each(?))
  UNION SELECT tenant_id FROM trades WHERE status = 'CLOSED' AND closed_at = ?`)
const tenantsAfter = statement<[string, number], { tenant_id: string }>('SELECT tenant_id FROM risk_profiles WHERE tenant_id > ? ORDER BY tenant_id LIMIT ?')

/** Re-evaluates the tenants a price import touched, inside its transaction (after the fills; src/app.ts hooks it up). */
export const evaluateOnNewPrices: PriceListener = (latestByPair, now) => {
  const marks = new Map<string, number | undefined>()
  for (const { tenant_id } of touchedTenants().all(JSON.stringify([...latestByPair.keys()]), now.toISOString())) {
    evaluateBreakers(tenant_id, now, marks)
  }
}

/** Evaluates every tenant once, BATCH to a transaction; returns how many. */
export function evaluateAll(now = new Date()): number {
  let after = ''
  let count = 0
  for (;;) {
    const batch = tenantsAfter().all(after, BATCH)
    if (batch.length === 0) return count
    write(() => {
      const marks = new Map<string, number | undefined>()
      for (const { tenant_id } of batch) evaluateBreakers(tenant_id, now, marks)
    })
    count += batch.length
    after = batch[batch.length - 1].tenant_id
  }
}

/** The minute tick: breakers on the latest marks, day start and peak, and the equity history. */
export const breakerWatch: Service = {
  name: 'breaker-watch',
  start() {
    const tick = () => {
      try {
        evaluateAll()
      } catch (error) {
        // Another process holds the lock (a CLI import evaluates its own tenants): the next tick catches up.
        if (!isBusy(error)) log({ level: 'error', msg: 'breaker evaluation failed', error: error instanceof Error ? error.message : String(error) })
      }
    }
    const first = setTimeout(tick, FIRST_TICK_MS)
    const every = setInterval(tick, TICK_MS)
    first.unref()
    every.unref()
    return () => {
      clearTimeout(first)
      clearInterval(every)
    }
  },
}
