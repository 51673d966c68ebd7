// Who opens the transaction: the request pipeline (store/write-queue.ts's writeWhenFree), a CLI
// command, or a service tick. A domain function's writes run as savepoint() or after
// assertInWrite(), both of which throw outside a transaction. The static check lists every call of
// store/db.ts's write() in src/ and compares it with the owners named below, so a new opener is a
// decision someone writes down; the dynamic checks run the real functions on a real database.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openApp } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { closeDatabase, db, savepoint, write } from '../../src/store/db.ts'
import { createTenant, findTenant } from '../../src/tenants/tenants.ts'
import { createUser } from '../../src/tenants/users.ts'
import { createApiKey } from '../../src/auth/api-keys.ts'
import { recordEvent } from '../../src/webhooks/events.ts'
import { appendIncident } from '../../src/risk/incidents.ts'
import { tempDir } from '../support/harness.ts'

const test = suite('structure: who opens the transaction')
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Every function in src/ that may call write(), and why it owns the change. */
const OWNERS: Record<string, string> = {
  'store/retention.ts next': 'service tick: the nightly purge, 500 rows a transaction',
  'cli/kill-switch.ts run': 'CLI command',
  'cli/prices.ts run': 'CLI command',
  'cli/tenant.ts run': 'CLI command',
  'cli/token.ts run': 'CLI command',
  'cli/user.ts run': 'CLI command',
  'cli/venue.ts run': 'CLI command',
  'signals/publisher.ts publish': 'the publish command: each model run is its own change',
  'signals/publisher.ts publishAndLog': 'service tick: the schedule, the catch-up, the retry, the demo',
  'signals/demo.ts replay': 'serve --demo at start: the replayed history, a week of days a transaction',
  'signals/demo.ts createDemoTenant': 'serve --demo at start: the demo tenant, its owner and its models',
  'signals/demo.ts start': 'service tick: the demo candles at 00:00 UTC',
  'signals/demo.ts loadDemo': "serve --demo at start: the demo tenant's breakers, set once after the replay",
  'trading/cancellations.ts settleBatch': "service tick: the kill switch's cancellations, a batch at a time",
  'webhooks/results.ts flushSuccesses': "service tick: the sender's successes, batched",
  'webhooks/results.ts record': "service tick: the sender's result of one failed attempt",
  'risk/integrity.ts checkIncidentTriggers': 'serve at start',
  'signals/chain-integrity.ts checkSignalTriggers': 'serve at start',
  'signals/chain-integrity.ts backfillChains': 'openApp and signals verify at open: signals from before sql/013 get their links',
  'risk/breaker-watch.ts evaluateAll': 'service tick: the breakers once a minute, 100 tenants a transaction',
  'risk/dead-man-switch-watch.ts fireDue': "service tick: each dead man's switch past its deadline fires in its own transaction",
  'backtests/runner.ts persist': 'the backtest runner: a claim, a result or a failure, each its own change after the worker answered',
  'venues/routes.ts handler': 'PUT /api/v1/venue: it reaches the venue first, then stores what the venue accepted',
  'venues/market-data.ts fetchAndStore': 'the market data tick and prices fetch: one transaction for what was fetched',
  'trading/live/lifecycle.ts sendOrder': 'the LIVE executor: "may be on the venue" before a send, and what the venue answered after it',
  'trading/live/lifecycle.ts cancelOnVenue': "the LIVE executor: a cancel's outcome on the venue",
  'trading/live/lifecycle.ts syncOrder': "the LIVE executor: an order's fills and end, as the venue reported them",
  'trading/live/reconciliation.ts refreshMarks': "reconciliation: the venue's last prices and the breakers at them, after reading the venue",
  'trading/live/reconciliation.ts reconcileTenant': "reconciliation: one pass's mismatches, after reading the venue",
  'trading/live/executor.ts pass': 'the LIVE executor: the protections of the pairs queued SELLs will sell, made due before the protection step',
  'trading/protection/poll.ts takeProfitsReached': "the protection poll: the venue's prices of the pairs whose take-profit Bulwark sells itself",
  'trading/protection/worker.ts save': 'the protection step: each phase (and its incident) written before the venue call that follows it',
  'trading/protection/worker.ts applyFills': "the protection step: a protective order's fills, as the venue reported them",
  'trading/protection/worker.ts selling': 'the protection step: the fills of its own market sale',
  'auth/api-keys.ts touchApiKey': "the guard's use record, before and outside the request's change",
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : []
  })
}

/** 'file enclosingFunction' for every call of the write imported from store/db.ts. */
function writeCallers(): string[] {
  const found: string[] = []
  for (const file of sourceFiles(SRC)) {
    const name = relative(SRC, file)
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    const importsWrite = source.statements.some(
      (s) =>
        ts.isImportDeclaration(s) &&
        /store\/db\.ts'?$|^'\.\/db\.ts'$/.test(s.moduleSpecifier.getText(source)) &&
        s.importClause?.namedBindings !== undefined &&
        ts.isNamedImports(s.importClause.namedBindings) &&
        s.importClause.namedBindings.elements.some((e) => e.name.text === 'write'),
    )
    if (!importsWrite && name !== 'store/db.ts') continue
    const visit = (node: ts.Node, owner: string): void => {
      let current = owner
      if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) current = node.name.getText(source)
      if (ts.isVariableDeclaration(node) && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) {
        current = node.name.getText(source)
      }
      if (ts.isPropertyAssignment(node) && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)))
        current = node.name.getText(source)
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'write') found.push(`${name} ${current}`)
      ts.forEachChild(node, (child) => visit(child, current))
    }
    if (name !== 'store/db.ts') visit(source, '(module)')
  }
  return [...new Set(found)].sort()
}

test('write() is called only by the owners of a change named here', () => {
  assert.equal(writeCallers(), Object.keys(OWNERS).sort())
})

test('the scan sees a call it must see (the oracle can fail)', () => {
  assert.ok(writeCallers().includes('cli/tenant.ts run'))
})

test.before(() => {
  closeDatabase()
  openApp(commandConfig(tempDir()))
})
test.after(() => closeDatabase())

test('a domain function refuses to run outside a transaction, and writes nothing', () => {
  const before = (db().prepare('SELECT count(*) AS n FROM tenants').get() as { n: number }).n
  assert.throws(() => createTenant({ slug: 'loose', plan: 'SIGNAL' }), /call inside write\(\)/)
  assert.throws(() => recordEvent('ten_x', 'webhook.ping', {}, new Date()), /call inside write\(\)/)
  assert.throws(() => appendIncident({ tenantId: 'ten_x', action: 'PAUSE', actor: 'test', status: 'RECORDED', now: new Date() }), /call inside write\(\)/)
  assert.is((db().prepare('SELECT count(*) AS n FROM tenants').get() as { n: number }).n, before)
  assert.is(findTenant('loose'), undefined)
  assert.is(db().inTransaction, false)
})

test("inside write() a domain function's refusal undoes its own rows and keeps the caller's", () => {
  write(() => {
    const tenant = createTenant({ slug: 'kept', plan: 'EXECUTE' })
    createUser({ tenantId: tenant.id, email: 'first@kept.localhost', role: 'owner', passwordHash: 'x' })
    // The same e-mail again: createUser refuses; the tenant and the first user stay.
    assert.throws(() => createUser({ tenantId: tenant.id, email: 'first@kept.localhost', role: 'owner', passwordHash: 'x' }), /already exists/)
    // A refusal after a nested function wrote: its savepoint takes its rows back, and only its.
    assert.throws(
      () =>
        savepoint(() => {
          createUser({ tenantId: tenant.id, email: 'undone@kept.localhost', role: 'viewer', passwordHash: 'x' })
          throw new Error('refused after writing')
        }),
      /refused after writing/,
    )
    createApiKey({ tenantId: tenant.id, createdBy: null, name: 'bot', scopes: ['signals:read'], expiresAt: null })
  })
  const tenant = findTenant('kept')!
  assert.ok(tenant)
  const users = db().prepare('SELECT email FROM users WHERE tenant_id = ?').all(tenant.id) as { email: string }[]
  assert.equal(
    users.map((u) => u.email),
    ['first@kept.localhost'],
  )
  assert.is((db().prepare('SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?').get(tenant.id) as { n: number }).n, 1)
})

test('a throw that escapes write() leaves none of the change', () => {
  assert.throws(
    () =>
      write(() => {
        createTenant({ slug: 'gone', plan: 'SIGNAL' })
        savepoint(() => db().prepare("UPDATE tenants SET plan = 'EXECUTE' WHERE slug = 'gone'").run())
        throw new Error('the command failed after its writes')
      }),
    /the command failed/,
  )
  assert.is(findTenant('gone'), undefined)
})

test.run()
