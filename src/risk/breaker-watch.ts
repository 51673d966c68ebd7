// When the breakers are evaluated besides an order placement (SPEC 9): in a price import's
// transaction, for every tenant the new prices touch (an open trade of an imported pair, or a trade
// the import's fills closed), and once a minute for every tenant, which also writes the equity
// history of the UTC days that ended (caught up at start for the days the service was down).
import { query, type Store } from '../store/store.ts'
import { log } from '../shared/log.ts'
import type { Service } from '../store/service.ts'
import type { PriceListener } from '../market/prices.ts'
import { DatabaseBusyError, isBusy } from '../store/sqlite/busy.ts'
import { evaluateBreakers } from './breakers.ts'

const TICK_MS = 60_000
const FIRST_TICK_MS = 1_000
/** Tenants per transaction in the minute tick: short transactions, so requests keep their turn. */
const BATCH = 100

const touchedTenants = query<[string, string], { tenant_id: string }>({
  sqlite: `SELECT DISTINCT tenant_id FROM trades WHERE status = 'OPEN' AND pair IN (SELECT value FROM json_each(?))
  UNION SELECT tenant_id FROM trades WHERE status = 'CLOSED' AND closed_at = ?`,
  postgres: `SELECT DISTINCT tenant_id FROM trades WHERE status = 'OPEN' AND pair IN (SELECT json_array_elements_text(?::json))
  UNION SELECT tenant_id FROM trades WHERE status = 'CLOSED' AND closed_at = ?`,
})
const tenantsAfter = query<[string, number], { tenant_id: string }>('SELECT tenant_id FROM risk_profiles WHERE tenant_id > ? ORDER BY tenant_id LIMIT ?')

/** Re-evaluates the tenants a price import touched, inside its transaction (after the fills; src/app.ts hooks it up). */
export const evaluateOnNewPrices: PriceListener = async (tx, latestByPair, now) => {
  const marks = new Map<string, number | undefined>()
  for (const { tenant_id } of await tx.all(touchedTenants, [JSON.stringify([...latestByPair.keys()]), now.toISOString()])) {
    await evaluateBreakers(tx, tenant_id, now, marks)
  }
}

/** Evaluates every tenant once, BATCH to a transaction; returns how many. */
export async function evaluateAll(store: Store, now = new Date()): Promise<number> {
  let after = ''
  let count = 0
  for (;;) {
    const batch = await store.read.all(tenantsAfter, [after, BATCH])
    if (batch.length === 0) return count
    await store.write(async (tx) => {
      const marks = new Map<string, number | undefined>()
      for (const { tenant_id } of batch) await evaluateBreakers(tx, tenant_id, now, marks)
    })
    count += batch.length
    after = batch[batch.length - 1].tenant_id
  }
}

/** The minute tick: breakers on the latest marks, day start and peak, and the equity history. */
export const breakerWatch: Service = {
  name: 'breaker-watch',
  start({ store }) {
    /** The pass in progress: a tick while one runs is skipped, and stopping waits for it (the store closes after). */
    let running: Promise<void> | undefined
    const pass = async () => {
      try {
        await evaluateAll(store)
      } catch (error) {
        // Another process holds the lock (a CLI import evaluates its own tenants): the next tick catches up.
        const busy = error instanceof DatabaseBusyError || isBusy(error)
        if (!busy) log({ level: 'error', msg: 'breaker evaluation failed', error: error instanceof Error ? error.message : String(error) })
      }
    }
    // pass() catches its own errors.
    const tick = () => {
      running ??= pass().finally(() => {
        running = undefined
      })
    }
    const first = setTimeout(tick, FIRST_TICK_MS)
    const every = setInterval(tick, TICK_MS)
    first.unref()
    every.unref()
    return async () => {
      clearTimeout(first)
      clearInterval(every)
      await running
    }
  },
}
