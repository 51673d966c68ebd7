// `serve --demo`: a clearly-labelled synthetic price history for every pair the models trade
// (./synthetic-prices.ts), a `demo` tenant whose owner's password is printed once, and an immediate
// publish, so a newcomer sees a full feed (and the demo tenant's automated orders) within seconds
// of the first start; a running demo server extends the history each midnight UTC, so the pending
// orders fill and the next day publishes like a real one.
import cron from 'node-cron'
import { log } from '../shared/log.ts'
import { write } from '../store/db.ts'
import type { Service } from '../shared/service.ts'
import { addDays, utcDay } from '../shared/dates.ts'
import { catalogue } from '../models/catalogue.ts'
import { createTenant, PLAN_MODEL_LIMIT, findTenant } from '../tenants/tenants.ts'
import { createUser } from '../tenants/users.ts'
import { setActiveModels } from '../tenants/workspace.ts'
import { generatePassword, hashPassword } from '../auth/passwords.ts'
import { publishAndLog } from './publisher.ts'
import { DEMO_SEED, loadSyntheticHistory } from './synthetic-prices.ts'

const DEMO_SLUG = 'demo'
const DEMO_OWNER = 'owner@demo.localhost'

/** serve --demo: extends the synthetic history every day at 00:00 UTC. */
export const demoPrices: Service = {
  name: 'demo-prices',
  start() {
    const task = cron.schedule(
      '0 0 * * *',
      () => {
        const pairs = write(() => loadSyntheticHistory(new Date()))
        log({ level: 'info', msg: 'synthetic demo candles extended', pairs: pairs.length })
      },
      { name: 'demo-prices', timezone: 'Etc/UTC' },
    )
    return () => task.destroy()
  },
}

/** Everything `serve --demo` does before the server listens; returns the lines to print. */
export async function loadDemo(now = new Date()): Promise<string[]> {
  const lines: string[] = []
  const pairs = write(() => loadSyntheticHistory(now))
  lines.push(`Demo:    SYNTHETIC prices (seeded random walk, seed ${DEMO_SEED}, not market data) for ${pairs.length} pairs, up to ${addDays(utcDay(now), -1)}`)
  if (findTenant(DEMO_SLUG)) {
    lines.push(`Demo:    tenant "${DEMO_SLUG}" already exists; its owner ${DEMO_OWNER} keeps the password printed when it was created`)
  } else {
    const password = generatePassword()
    const passwordHash = await hashPassword(password)
    // One change: a demo tenant exists with its owner and its models, or not at all.
    write(() => {
      const tenant = createTenant({ slug: DEMO_SLUG, plan: 'EXECUTE' })
      createUser({ tenantId: tenant.id, email: DEMO_OWNER, role: 'owner', passwordHash })
      setActiveModels(
        tenant.id,
        catalogue()
          .slice(0, PLAN_MODEL_LIMIT.EXECUTE)
          .map((m) => m.id),
      )
    })
    lines.push(`Demo:    tenant "${DEMO_SLUG}" (plan EXECUTE, every model active), owner ${DEMO_OWNER}`)
    lines.push(`         password (shown once): ${password}`)
  }
  let signals = 0
  const date = utcDay(now)
  for (const model of catalogue()) signals += publishAndLog(model, date, 'demo', now)?.signals.length ?? 0
  lines.push(`Demo:    published ${date} (as of ${addDays(date, -1)}): ${signals} new signals`)
  return lines
}
