// Who opens the transaction: the request pipeline (http/pipeline.ts), a CLI command, a service tick,
// the executor. A domain function takes the change's tx (a Tx, which only write() hands out), so
// the types prove it runs inside one; its refusals are undone by tx.savepoint(). The static check
// lists every call of a Store's write() in src/ and compares it with the owners named below, so a
// new opener is a decision someone writes down; the dynamic checks run the real functions on a
// real database (the pass's engine).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openApp, type App } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { query } from '../../src/store/store.ts'
import { createTenant, findTenant } from '../../src/tenants/tenants.ts'
import { createUser } from '../../src/tenants/users.ts'
import { createApiKey } from '../../src/auth/api-keys.ts'
import { databaseUrlFor, tempDir } from '../support/harness.ts'

const test = suite('structure: who opens the transaction')
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Every function in src/ that may call a Store's write(), and why it owns the change. */
const OWNERS: Record<string, string> = {
  'http/pipeline.ts answer': 'the request pipeline: a POST, PUT, PATCH or DELETE is one change, its idempotency record with it',
  'store/retention.ts runPurges': 'service tick: the nightly purge, 500 rows a transaction',
  'store/secrets-fingerprint.ts checkSecrets': "openApp at open: the secrets' fingerprint recorded by the first open, compared by every other",
  'cli/kill-switch.ts operate': 'CLI command: every tenant switched in one change, or none',
  'cli/prices.ts run': 'CLI command',
  'cli/store.ts run': 'CLI command: adopt-secrets, on the database alone (the App refuses those secrets)',
  'cli/tenant.ts run': 'CLI command',
  'cli/token.ts run': 'CLI command',
  'cli/user.ts run': 'CLI command',
  'cli/venue.ts run': 'CLI command',
  'cli/gateway.ts run': 'CLI command',
  'gateway/binance/new-order.ts placeGatewayOrder':
    "the gateway's new order (Binance's dialect has no pipeline): its checks and writes in one change, then the wait for the venue",
  'gateway/binance/order-routes.ts cancelAndWait': "the gateway's cancel: asked in one change, then the wait for the venue's answer",
  'signals/publisher.ts publish': 'the publish command: each model run is its own change',
  'signals/publisher.ts publishAndLog': 'service tick: the schedule, the catch-up, the retry, the demo',
  'signals/demo.ts replay': 'serve --demo at start: the replayed history, a week of days a transaction',
  'signals/demo.ts createDemoTenant': 'serve --demo at start: the demo tenant, its owner and its models',
  'signals/demo.ts extend': 'service tick: the demo candles at 00:00 UTC',
  'signals/demo.ts loadDemo': "serve --demo at start: the demo tenant's breakers, set once after the replay",
  'trading/cancellations.ts settleBatch': "service tick: the kill switch's cancellations, a batch at a time",
  'webhooks/results.ts writeSuccesses': "service tick: the sender's successes, batched",
  'webhooks/results.ts recordNow': "service tick: the sender's result of one failed attempt",
  'risk/integrity.ts checkIncidentTriggers': 'serve at start',
  'signals/chain-integrity.ts checkSignalTriggers': 'serve at start',
  'signals/chain-integrity.ts backfillChains': 'openApp and signals verify at open: signals from before sql/013 get their links',
  'risk/breaker-watch.ts evaluateAll': 'service tick: the breakers once a minute, 100 tenants a transaction',
  'risk/dead-man-switch-watch.ts fireDue': "service tick: each dead man's switch past its deadline fires in its own transaction",
  'backtests/runner.ts pump': 'the backtest runner: what a crash left RUNNING queued again, then each claim its own change',
  'backtests/runner.ts run': 'the backtest runner: a result or a failure, its own change after the worker answered',
  'backtests/runner.ts stop': 'the backtest runner at stop: the runs it leaves RUNNING queued again',
  'venues/routes.ts handler': 'PUT /api/v1/venue: it reaches the venue first, then stores what the venue accepted',
  'venues/market-data.ts fetchAndStore': 'the market data tick and prices fetch: one transaction for what was fetched',
  'trading/live/lifecycle.ts sendOrder': 'the LIVE executor: "may be on the venue" before a send, and what the venue answered after it',
  'trading/live/lifecycle.ts cancelOnVenue': "the LIVE executor: a cancel's outcome on the venue",
  'trading/live/lifecycle.ts syncOrder': "the LIVE executor: an order's fills and end, as the venue reported them",
  'trading/live/reconciliation.ts refreshMarks': "reconciliation: the venue's last prices and the breakers at them, after reading the venue",
  'trading/live/warmth.ts keepWarm': 'the LIVE executor: the last prices of the pairs a tenant traded lately, kept as marks, after reading the venue',
  'trading/live/reconciliation.ts reconcileTenant': "reconciliation: one pass's mismatches, after reading the venue",
  'trading/live/executor.ts pass': 'the LIVE executor: the protections of the pairs queued SELLs will sell, made due before the protection step',
  'trading/protection/poll.ts takeProfitsReached': "the protection poll: the venue's prices of the pairs whose take-profit Bulwark sells itself",
  'trading/protection/worker.ts save': 'the protection step: each phase (and its incident) written before the venue call that follows it',
  'trading/protection/worker.ts applyFills': "the protection step: a protective order's fills, as the venue reported them",
  'trading/protection/worker.ts selling': 'the protection step: the fills of its own market sale',
  'alerts/intake.ts acceptAlert': "the alert receiver (no pipeline): the duplicate check, the order and the alert's log row in one change",
  'alerts/intake.ts recordRefusal': "the alert receiver: a refusal met before the order's change (malformed, stale, not priced), its log row alone",
  'alerts/intake.ts flush': "the alert receiver: the hooks' refused_count, the increments of many refusals in one change",
  'auth/api-keys.ts touchApiKey': "the guard's use record, before and outside the request's change",
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : []
  })
}

/** 'file enclosingFunction' for every call `X.write(` whose X is named store or ends with `.store`. */
function writeCallers(): string[] {
  const found: string[] = []
  for (const file of sourceFiles(SRC)) {
    const name = relative(SRC, file)
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    const isStore = (node: ts.Expression): boolean =>
      (ts.isIdentifier(node) && node.text === 'store') || (ts.isPropertyAccessExpression(node) && node.name.text === 'store')
    const visit = (node: ts.Node, owner: string): void => {
      let current = owner
      if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) current = node.name.getText(source)
      if (ts.isVariableDeclaration(node) && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) {
        current = node.name.getText(source)
      }
      if (ts.isPropertyAssignment(node) && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)))
        current = node.name.getText(source)
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'write' &&
        isStore(node.expression.expression)
      )
        found.push(`${name} ${current}`)
      ts.forEachChild(node, (child) => visit(child, current))
    }
    visit(source, '(module)')
  }
  return [...new Set(found)].sort()
}

test("a Store's write() is called only by the owners of a change named here", () => {
  assert.equal(writeCallers(), Object.keys(OWNERS).sort())
})

test('the scan sees a call it must see (the oracle can fail)', () => {
  assert.ok(writeCallers().includes('cli/tenant.ts run'))
  assert.ok(writeCallers().includes('http/pipeline.ts answer'))
})

/** Waits for `promise` and checks that it was refused with a message matching `pattern`. */
async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise
  } catch (error) {
    assert.match((error as Error).message, pattern)
    return
  }
  assert.unreachable(`expected a refusal matching ${pattern}`)
}

const count = query<[string], { n: number }>('SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?')
const emails = query<[string], { email: string }>('SELECT email FROM users WHERE tenant_id = ?')
const upgrade = query<[string]>("UPDATE tenants SET plan = 'EXECUTE' WHERE slug = ?")

let app: App
test.before(async () => {
  const dir = tempDir()
  app = await openApp(commandConfig({ 'data-dir': dir, database: await databaseUrlFor(dir) }))
})
test.after(() => app?.close())

test("store.write() inside a write's work is refused (writes run one at a time: pass the tx down), and writes nothing", async () => {
  await rejects(
    app.store.write(async (tx) => {
      await createTenant(tx, { slug: 'outer', plan: 'SIGNAL' })
      return app.store.write((inner) => createTenant(inner, { slug: 'inner', plan: 'SIGNAL' }))
    }),
    /store\.write\(\) inside a write/,
  )
  assert.is(await findTenant(app.store.read, 'outer'), undefined)
  assert.is(await findTenant(app.store.read, 'inner'), undefined)
})

test("inside store.write() a domain function's refusal undoes its own rows and keeps the caller's", async () => {
  await app.store.write(async (tx) => {
    const tenant = await createTenant(tx, { slug: 'kept', plan: 'EXECUTE' })
    await createUser(tx, { tenantId: tenant.id, email: 'first@kept.localhost', role: 'owner', passwordHash: 'x' })
    // The same e-mail again: createUser refuses; the tenant and the first user stay.
    await rejects(createUser(tx, { tenantId: tenant.id, email: 'first@kept.localhost', role: 'owner', passwordHash: 'x' }), /already exists/)
    // A refusal after a nested function wrote: its savepoint takes its rows back, and only its.
    await rejects(
      tx.savepoint(async () => {
        await createUser(tx, { tenantId: tenant.id, email: 'undone@kept.localhost', role: 'viewer', passwordHash: 'x' })
        throw new Error('refused after writing')
      }),
      /refused after writing/,
    )
    await createApiKey(tx, { tenantId: tenant.id, createdBy: null, name: 'bot', scopes: ['signals:read'], expiresAt: null })
  })
  const tenant = await findTenant(app.store.read, 'kept')
  assert.ok(tenant)
  const users = await app.store.read.all(emails, [tenant.id])
  assert.equal(
    users.map((u) => u.email),
    ['first@kept.localhost'],
  )
  assert.is((await app.store.read.get(count, [tenant.id]))?.n, 1)
})

test('a throw that escapes write() leaves none of the change', async () => {
  await rejects(
    app.store.write(async (tx) => {
      await createTenant(tx, { slug: 'gone', plan: 'SIGNAL' })
      await tx.savepoint(() => tx.run(upgrade, ['gone']))
      throw new Error('the command failed after its writes')
    }),
    /the command failed/,
  )
  assert.is(await findTenant(app.store.read, 'gone'), undefined)
})

test.run()
