// The demo tenant's circuit breakers (`serve --demo`, SPEC 9): set once, after the first replay,
// from the numbers that replay left, so a newcomer sees every loss breaker on and one of them past
// its warning (80% of its limit) without anything tripped, whatever day the demo started on.
//   - max_drawdown_pct at drawdown now x 1.24, rounded down to 0.01: utilization 80.6% to 81%,
//     WARNING (the synthetic history rarely ends at its peak; a drawdown under 0.5% warns nothing);
//   - max_consecutive_losses: the losing streak now + 1 when the drawdown cannot warn and the streak
//     is 4 or more (WARNING), else twice the streak + 2, at least 6 (OK);
//   - max_daily_loss_usd: 1.5 x the worst day of the equity history (or twice today's loss), rounded
//     up to 100, at least 500 (OK: a paper day's loss only shows at midnight's candles);
//   - max_orders_per_minute 60 (a day's publish places at most 15).
// Set through updateRiskProfile, so the trail has a RISK_PROFILE_UPDATED incident (actor
// demo@localhost) naming every value and a risk.limit.warning event goes out. Idempotent: a tenant
// whose profile was ever changed (any RISK_PROFILE_UPDATED incident, or a breaker already on) keeps
// it as it is, so a restart, or a demo data dir whose owner edited the profile, is left alone.
import { query, type Queries, type Tx } from '../store/store.ts'
import { findBreakerLimits, lossReadings, WARNING_SHARE } from './breakers.ts'
import { equityNow, findEquityState, listEquityHistory, stateAfter } from './equity.ts'
import { updateRiskProfile } from './profile.ts'

export const DEMO_BREAKERS_ACTOR = 'demo@localhost'
/** The drawdown limit over the drawdown now: utilization 1 / 1.24 = 80.6%, a little past the warning. */
const DRAWDOWN_HEADROOM = 1.24
const MIN_WARNING_DRAWDOWN_PCT = 0.5
const ORDERS_PER_MINUTE = 60

const profileChanged = query<[string], { n: number }>(
  "SELECT count(*) AS n FROM (SELECT 1 FROM incidents WHERE tenant_id = ? AND action = 'RISK_PROFILE_UPDATED' LIMIT 1) AS updated",
)

export interface DemoBreakers {
  max_daily_loss_usd: number
  max_drawdown_pct: number
  max_consecutive_losses: number
  max_orders_per_minute: number
}

/** The limits for the tenant's numbers as they stand at `now`, and which one is past its warning (undefined: none could be). */
export async function demoBreakerLimits(db: Queries, tenantId: string, now: Date): Promise<{ limits: DemoBreakers; warning: keyof DemoBreakers | undefined }> {
  const profile = (await findBreakerLimits(db, tenantId))!
  const equity = await equityNow(db, tenantId)
  const state = stateAfter(await findEquityState(db, tenantId), equity.equity, now)
  // Readings only: limits this wide make each reading's value what the tenant stands at.
  const probe = { ...profile, max_daily_loss_usd: 1, max_drawdown_pct: 1, max_consecutive_losses: 1000 }
  const value = Object.fromEntries((await lossReadings(db, tenantId, probe, equity, state, now)).map((r) => [r.name, r.value]))
  const drawdown = value.max_drawdown_pct
  const streak = value.max_consecutive_losses
  const worstDay = Math.max(0, ...(await listEquityHistory(db, tenantId, '0000-01-01', '9999-12-31')).map((p) => -p.pnl_usd))
  const drawdownWarns = drawdown >= MIN_WARNING_DRAWDOWN_PCT
  const streakWarns = !drawdownWarns && streak >= 4
  const limits: DemoBreakers = {
    max_daily_loss_usd: Math.max(500, Math.ceil(Math.max(1.5 * worstDay, 2 * value.max_daily_loss_usd) / 100) * 100),
    max_drawdown_pct: drawdownWarns ? Math.floor(drawdown * DRAWDOWN_HEADROOM * 100) / 100 : 20,
    max_consecutive_losses: streakWarns ? streak + 1 : Math.max(6, 2 * streak + 2),
    max_orders_per_minute: ORDERS_PER_MINUTE,
  }
  const warning = drawdownWarns ? 'max_drawdown_pct' : streakWarns ? 'max_consecutive_losses' : undefined
  // What the choice above promises: the one past its warning is not at its limit.
  if (warning && !(value[warning] >= limits[warning] * WARNING_SHARE && value[warning] < limits[warning])) {
    throw new Error(`demo breakers: ${warning} ${value[warning]} is not between its warning and its limit ${limits[warning]}`)
  }
  return { limits, warning }
}

/**
 * Turns the demo tenant's breakers on, once (see the top of this file); returns the banner line, or
 * undefined when the profile was already changed. In the caller's transaction.
 */
export async function setDemoBreakers(tx: Tx, tenantId: string, now: Date): Promise<string | undefined> {
  const profile = await findBreakerLimits(tx, tenantId)
  if (!profile || (await tx.get(profileChanged, [tenantId]))!.n > 0) return undefined
  if (profile.max_daily_loss_usd !== null || profile.max_drawdown_pct !== null || profile.max_consecutive_losses !== null) return undefined
  if (profile.max_orders_per_minute !== null) return undefined
  const { limits, warning } = await demoBreakerLimits(tx, tenantId, now)
  await updateRiskProfile(tx, tenantId, limits, DEMO_BREAKERS_ACTOR, now)
  const past = warning ? `${warning} is past its warning (80%)` : 'none is past its warning (the replay ended near its peak)'
  return (
    `Demo:    breakers on: max_daily_loss_usd ${limits.max_daily_loss_usd}, max_drawdown_pct ${limits.max_drawdown_pct}, ` +
    `max_consecutive_losses ${limits.max_consecutive_losses}, max_orders_per_minute ${limits.max_orders_per_minute}; ${past}`
  )
}
