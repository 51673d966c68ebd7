// Dependencies between the folders of src/ point one way. A static scan of every .ts file (imports,
// `import type`, re-exports, dynamic `import()` and `import('...').T` types) builds the folder graph:
// each folder of src/ is a node, and so is each top-level file (main.ts, app.ts, config.ts, ...).
// The checks: no folder-level cycle; each import points down LAYERS; http/, store/ and shared/ know
// no feature; shared/ needs nothing but node:; features use only http's route surface; and nothing
// is imported for its side effects.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const test = suite('structure: layers')
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/**
 * The layers, top to bottom: a node imports only nodes of the lines below its own, never one of its
 * line. Features that need each other's effects meet in app.ts (listeners, the kill switch's halt).
 */
const LAYERS: string[][] = [
  ['sea'], // the executable's entry point and what the build runs (JavaScript only: no imports of src/)
  ['main.ts'], // checks the runtime, then loads cli
  ['cli'], // one file per command
  ['app.ts'], // the composition root: services, consequences, mounts, the guard
  ['app-routes.ts'], // ... and its route table, with what health and metrics read
  ['gateway', 'alerts'], // adapters of their own over trading's orders: Binance's dialect for existing bots (SPEC 14),
  // and the receiver of alerts from senders that cannot sign (SPEC 16), with its hooks' routes
  ['system', 'trading', 'console'], // health and metrics (their sources handed in by app.ts); orders, fills,
  // automation (it hears publishes through app.ts); the console's page and assets (its data comes through the API)
  ['risk', 'signals', 'backtests'], // risk sits below trading: trading's checks read pauses and write incidents,
  // and the kill switch reaches orders and trades through app.ts's TradingHalt
  ['auth'], // the guard (given to http by app.ts), keys, sessions, passwords
  ['tenants', 'webhooks'], // tenants below auth: users and their roles are tenants', auth checks them
  ['venues'], // ccxt: the exchange, its market data (into market's candles); trading and risk reach venues
  ['performance'], // a model portfolio's returns and metrics over signals and candles: pure, below signals and backtests
  ['models', 'market'],
  ['http'], // the adapter; knows no feature
  ['store'],
  ['config.ts', 'version.ts'], // the Config (read once, passed down); the version
  ['shared'], // errors as codes, log, dates, text, no feature
]

/** Folders that know no feature; every other folder of src/ but cli is a feature. */
const INFRASTRUCTURE = ['http', 'store', 'shared']
/** What a feature's routes may use of http/: the rest is the adapter's own business. */
const HTTP_SURFACE = ['http/route.ts', 'http/schema.ts', 'http/pagination.ts', 'http/filters.ts', 'http/read-cache.ts']
/**
 * What the gateway and the alert receiver, adapters of their own mounted on the same server, share
 * of http's: the answer's types, the mount, the rate limiter, the client's address.
 */
const ADAPTER_PARTS = ['http/problem.ts', 'http/server.ts', 'http/rate-limit.ts', 'http/client-address.ts']

interface Use {
  from: string
  to: string
  specifier: string
  sideEffectOnly: boolean
}

/** Every module specifier a source text names, with whether it is imported only for its effects. */
function specifiers(fileName: string, text: string): { specifier: string; sideEffectOnly: boolean }[] {
  const found: { specifier: string; sideEffectOnly: boolean }[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, sideEffectOnly: ts.isImportDeclaration(node) && !node.importClause })
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, sideEffectOnly: false })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, sideEffectOnly: false })
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, sideEffectOnly: false })
    }
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS))
  return found
}

/** src/http/route.ts -> http; src/app.ts -> app.ts. */
function nodeOf(path: string): string {
  return path.includes('/') ? path.slice(0, path.indexOf('/')) : path
}

function scan(): Use[] {
  const files = readdirSync(SRC, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split('\\').join('/'))
  return files.flatMap((from) =>
    specifiers(from, readFileSync(join(SRC, from), 'utf8')).map(({ specifier, sideEffectOnly }) => ({
      from,
      specifier,
      sideEffectOnly,
      to: specifier.startsWith('.')
        ? relative(SRC, resolve(SRC, dirname(from), specifier))
            .split('\\')
            .join('/')
        : specifier,
    })),
  )
}

const uses = scan()
const local = uses.filter((u) => u.specifier.startsWith('.'))
const crossing = local.filter((u) => nodeOf(u.from) !== nodeOf(u.to))
const describe = (u: Use) => `src/${u.from} imports ${u.specifier}`

/** Folder-level cycles as "a -> b -> a", each step with one import that makes it; empty if none. */
function findCycles(): string[] {
  const edges = new Map<string, Map<string, Use>>()
  for (const u of crossing) {
    const out = edges.get(nodeOf(u.from)) ?? new Map<string, Use>()
    if (!out.has(nodeOf(u.to))) out.set(nodeOf(u.to), u)
    edges.set(nodeOf(u.from), out)
  }
  // Depth-first search; a node on the current path reached again closes a cycle.
  const cycleFrom = (start: string): string[] | undefined => {
    const done = new Set<string>()
    const path: string[] = []
    const visit = (node: string): string[] | undefined => {
      const at = path.indexOf(node)
      if (at >= 0) return [...path.slice(at), node]
      if (done.has(node)) return undefined
      path.push(node)
      for (const next of edges.get(node)?.keys() ?? []) {
        const cycle = visit(next)
        if (cycle) return cycle
      }
      path.pop()
      done.add(node)
      return undefined
    }
    return visit(start)
  }
  // Each cycle found is reported, then its closing edge set aside, until none is left.
  const cycles: string[] = []
  for (const start of [...edges.keys()].sort()) {
    for (let cycle = cycleFrom(start); cycle; cycle = cycleFrom(start)) {
      const steps = cycle.slice(1).map((to, i) => `  ${cycle[i]} -> ${to}: ${describe(edges.get(cycle[i])!.get(to)!)}`)
      cycles.push(`${cycle.join(' -> ')}\n${steps.join('\n')}`)
      edges.get(cycle.at(-2)!)!.delete(cycle.at(-1)!)
    }
  }
  return cycles
}

test('the scan reads every form of import', () => {
  const text = [
    "import { a } from './a.ts'",
    "import type { B } from './b.ts'",
    "import './c.ts'",
    "export { d } from './d.ts'",
    "export * from './e.ts'",
    "const f = await import('./f.ts')",
    "let g: import('./g.ts').G",
    "// import './comment.ts'",
  ].join('\n')
  assert.equal(specifiers('sample.ts', text), [
    { specifier: './a.ts', sideEffectOnly: false },
    { specifier: './b.ts', sideEffectOnly: false },
    { specifier: './c.ts', sideEffectOnly: true },
    { specifier: './d.ts', sideEffectOnly: false },
    { specifier: './e.ts', sideEffectOnly: false },
    { specifier: './f.ts', sideEffectOnly: false },
    { specifier: './g.ts', sideEffectOnly: false },
  ])
  // The scan of src/ sees the entry point's dynamic import and the composition root's imports.
  assert.ok(local.some((u) => u.from === 'main.ts' && u.to === 'cli/main.ts'))
  assert.ok(crossing.filter((u) => u.from === 'app.ts').length > 10)
})

test('no folder-level cycle', () => {
  const cycles = findCycles()
  assert.equal(cycles, [], `folders import each other:\n${cycles.join('\n')}`)
})

test('every import points down the layers', () => {
  const rank = new Map(LAYERS.flatMap((line, i) => line.map((node) => [node, i] as const)))
  const nodes = new Set(
    readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => e.name),
  )
  const unplaced = [...nodes].filter((node) => !rank.has(node))
  assert.equal(unplaced, [], `place src/${unplaced.join(', src/')} in LAYERS`)
  const upward = crossing.filter((u) => rank.get(nodeOf(u.from))! >= rank.get(nodeOf(u.to))!).map(describe)
  assert.equal(upward, [], `imports that do not point down the layers:\n${upward.join('\n')}`)
})

test('http/, store/ and shared/ import no feature and no command', () => {
  const folders = new Set(crossing.map((u) => nodeOf(u.from)).filter((n) => !n.endsWith('.ts')))
  const above = [...folders].filter((f) => !INFRASTRUCTURE.includes(f))
  const wrong = crossing.filter((u) => INFRASTRUCTURE.includes(nodeOf(u.from)) && above.includes(nodeOf(u.to))).map(describe)
  assert.equal(wrong, [], wrong.join('\n'))
})

test('shared/ imports only shared/ and node:', () => {
  const wrong = uses.filter((u) => nodeOf(u.from) === 'shared' && !u.specifier.startsWith('node:') && !u.to.startsWith('shared/')).map(describe)
  assert.equal(wrong, [], wrong.join('\n'))
})

test("features use only http's public surface (routes, schemas, pagination, filters, the read cache)", () => {
  const wrong = crossing
    .filter(
      (u) =>
        !INFRASTRUCTURE.includes(nodeOf(u.from)) &&
        u.from.includes('/') &&
        !u.from.startsWith('cli/') &&
        nodeOf(u.to) === 'http' &&
        !HTTP_SURFACE.includes(u.to) &&
        !(['gateway', 'alerts'].includes(nodeOf(u.from)) && ADAPTER_PARTS.includes(u.to)),
    )
    .map(describe)
  assert.equal(wrong, [], wrong.join('\n'))
})

test('no module is imported only for its side effects', () => {
  const wrong = uses.filter((u) => u.sideEffectOnly).map(describe)
  assert.equal(wrong, [], wrong.join('\n'))
})

test.run()
