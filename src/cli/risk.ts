// `bulwark risk show`: a tenant's equity, breakers and limits from the database file, as GET
// /api/v1/risk/equity and /api/v1/risk/profile answer them, for an operator at the host. Reads
// only: it records nothing, so looking never moves the day start or the peak.
import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp } from '../app.ts'
import { findTenant } from '../tenants/tenants.ts'
import { riskProfile, type RiskProfile } from '../risk/profile.ts'
import { equityView, type EquityView } from '../risk/equity-routes.ts'

/** The limits in the order docs/risk.md lists them; null is off. */
const LIMITS = [
  'max_open_trades',
  'max_exposure_usd',
  'max_order_notional_usd',
  'price_band_pct',
  'max_trades_per_day',
  'max_orders_per_minute',
  'max_daily_loss_usd',
  'max_drawdown_pct',
  'max_consecutive_losses',
] as const

const usd = (n: number) => n.toFixed(2)
const signed = (n: number) => `${n >= 0 ? '+' : ''}${usd(n)}`

function render(slug: string, view: EquityView, profile: RiskProfile): string {
  const lines = [
    `tenant ${slug}, as of ${view.as_of}`,
    `equity      ${usd(view.equity_usd)} USD = capital ${usd(view.capital_usd)} + realized ${usd(view.realized_pnl_usd)} + unrealized ${usd(view.unrealized_pnl_usd)}`,
    `exposure    ${usd(view.exposure_usd)} USD`,
    `day start   ${usd(view.day_start_equity_usd)} USD, daily PnL ${signed(view.daily_pnl_usd)} USD`,
    `peak        ${usd(view.peak_equity_usd)} USD, drawdown ${view.drawdown_pct.toFixed(2)}%`,
    `trading     ${profile.trading_paused ? 'PAUSED (fleet)' : 'active'}${profile.paused_model_ids.length ? `; models paused: ${profile.paused_model_ids.join(', ')}` : ''}`,
    'breakers',
  ]
  if (view.breakers.length === 0) lines.push('  none on')
  for (const b of view.breakers) {
    const value = Number.isInteger(b.limit) && Number.isInteger(b.value) ? `${b.value} / ${b.limit}` : `${usd(b.value)} / ${usd(b.limit)}`
    lines.push(`  ${b.name.padEnd(24)} ${value.padEnd(22)} ${b.utilization_pct.toFixed(1).padStart(6)}%  ${b.state}`)
  }
  lines.push('limits')
  for (const name of LIMITS) lines.push(`  ${name.padEnd(24)} ${profile[name] ?? 'off'}`)
  lines.push(`  ${'breaker_action'.padEnd(24)} ${profile.breaker_action}`)
  return `${lines.join('\n')}\n`
}

export const riskShow: CliCommand = {
  name: 'risk show',
  usage: 'bulwark risk show --tenant SLUG [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: "print a tenant's equity, drawdown, each breaker's utilization and state, the pause and every limit (or off); reads only",
  examples: ['bulwark risk show --tenant acme'],
  async run(argv) {
    const args = parseArgs(argv, { tenant: 'string', ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = str(args, 'tenant')
    if (slug === undefined || slug === '') throw new UsageError('--tenant SLUG is required')
    const app = await openApp(commandConfig(args.flags))
    try {
      const db = app.store.read
      const tenant = await findTenant(db, slug)
      if (!tenant) {
        process.stderr.write(`error: no tenant ${slug}\n`)
        return 1
      }
      process.stdout.write(render(slug, await equityView(db, tenant.id, new Date()), await riskProfile(db, tenant.id)))
      return 0
    } finally {
      await app.close()
    }
  },
}
