// engines: own
// Every query() of src/ written as a literal text prepares on PostgreSQL: the TypeScript AST gives
// each call's PostgreSQL text (its one text, or the `postgres` of its two), and a database migrated
// through sql/postgres/ PREPAREs it, as the driver will: syntax, every table and column, GROUP BY,
// and the type of every parameter (PostgreSQL must infer each one from its context, as it does for
// the driver's untyped values). A query built at run time (a template with ${...}) is not seen here;
// the suite's PostgreSQL pass runs it. (This file manages its own server: it runs on one pass.)
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { migratePostgres } from '../../src/store/postgres/migrate.ts'
import { toPositional } from '../../src/store/postgres/named-params.ts'
import { sharedPostgres } from '../support/postgres.ts'

const test = suite('store: every query prepares on PostgreSQL')
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

interface Found {
  where: string
  text: string
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : []
  })
}

/**
 * A literal's text, or undefined for one built at run time; a template's ${NAME} is resolved where
 * NAME is a constant of the same file whose text is itself such a literal (a shared fragment).
 */
function literal(node: ts.Node, constants: Map<string, ts.Expression> = new Map()): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text
  if (!ts.isTemplateExpression(node)) return undefined
  let text = node.head.text
  for (const span of node.templateSpans) {
    const bound = ts.isIdentifier(span.expression) ? constants.get(span.expression.text) : undefined
    const value = bound && literal(bound, constants)
    if (value === undefined) return undefined
    text += value + span.literal.text
  }
  return text
}

/** The file's module-level `const NAME = ...` initialisers, by name. */
function constantsOf(source: ts.SourceFile): Map<string, ts.Expression> {
  const constants = new Map<string, ts.Expression>()
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue
    for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer) constants.set(d.name.text, d.initializer)
  }
  return constants
}

/** The PostgreSQL text of every query() call with literal text in src/. */
function queriesInSource(): Found[] {
  const found: Found[] = []
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    const constants = constantsOf(source)
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'query' && node.arguments.length === 1) {
        const [arg] = node.arguments
        let text = literal(arg, constants)
        if (ts.isObjectLiteralExpression(arg)) {
          const postgres = arg.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === 'postgres') as ts.PropertyAssignment | undefined
          text = postgres && literal(postgres.initializer, constants)
        }
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
        if (text !== undefined) found.push({ where: `${relative(SRC, file)}:${line + 1}`, text })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return found
}

test('the scan finds the queries (the oracle can fail)', () => {
  const found = queriesInSource()
  assert.ok(found.length > 150, `${found.length} queries`)
  assert.ok(found.some((q) => q.where.startsWith('tenants/tenants.ts')))
})

test('no unquoted camelCase alias (PostgreSQL folds it to lower case: row.tenantId would be undefined)', () => {
  const folded = queriesInSource().filter((q) => /\bAS [a-z]+[A-Z]\w*\b/.test(q.text))
  assert.equal(
    folded.map((q) => q.where),
    [],
  )
})

test('each one prepares on a migrated PostgreSQL database', async () => {
  const server = await sharedPostgres()
  const url = await server.createDatabase()
  await migratePostgres({ connectionString: url })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const failures: string[] = []
  try {
    for (const [i, q] of queriesInSource().entries()) {
      const { text } = toPositional(q.text)
      // Statements PREPARE does not take (DDL, PRAGMA, SAVEPOINT): none is written as a query() but the
      // trigger guard's, checked by the suite.
      if (!/^\s*(WITH|SELECT|INSERT|UPDATE|DELETE|VALUES)\b/i.test(text)) continue
      try {
        await client.query(`PREPARE q${i} AS ${text}`)
        await client.query(`DEALLOCATE q${i}`)
      } catch (error) {
        failures.push(`${q.where}: ${(error as Error).message}\n    ${text.replace(/\s+/g, ' ').trim().slice(0, 240)}`)
      }
    }
  } finally {
    await client.end()
  }
  assert.equal(failures, [], `${failures.length} queries fail on PostgreSQL:\n${failures.join('\n')}`)
})

test.run()
