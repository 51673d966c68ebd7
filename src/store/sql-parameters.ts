// The parameters of a query text, SQLite-style: named (@name) or positional (?). Quoted strings
// ('...', E'...', $tag$...$tag$), quoted identifiers and comments are skipped, so a '?' or '@' in
// them is text. Each engine rewrites them its own way: PostgreSQL numbers them (postgres/named-params.ts),
// SQLite hides their values from its planner (sqlite/queries.ts).

const identifierStart = /[A-Za-z_]/
const identifierPart = /[A-Za-z0-9_$]/

/** The end (exclusive) of a quoted run opened at `start` by `quote`, a doubled quote being one character. */
function endOfQuoted(sql: string, start: number, quote: string, backslashes: boolean): number {
  let i = start + 1
  while (i < sql.length) {
    const c = sql[i]
    if (backslashes && c === '\\') i += 2
    else if (c === quote && sql[i + 1] === quote) i += 2
    else if (c === quote) return i + 1
    else i++
  }
  return sql.length
}

function endOfBlockComment(sql: string, start: number): number {
  let depth = 0
  let i = start
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++
      i += 2
    } else if (sql.startsWith('*/', i)) {
      depth--
      i += 2
      if (depth === 0) return i
    } else i++
  }
  return sql.length
}

/** A parameter as written: `{ name: 'tenant' }` for @tenant, `{ name: undefined }` for ?. */
export interface Parameter {
  name: string | undefined
  text: string
}

/**
 * The text with each parameter replaced by what `replace` returns for it; everything else as written.
 *
 * @example
 * rewriteParameters("SELECT * FROM t WHERE a = @a AND b = '@b?'", (p) => `(+${p.text})`)
 * // "SELECT * FROM t WHERE a = (+@a) AND b = '@b?'"
 */
export function rewriteParameters(sql: string, replace: (parameter: Parameter) => string): string {
  let out = ''
  let i = 0
  while (i < sql.length) {
    const c = sql[i]
    const before = i > 0 ? sql[i - 1] : ''
    let end = i + 1
    if (c === "'") {
      const escaped = (before === 'E' || before === 'e') && (i < 2 || !identifierPart.test(sql[i - 2]))
      end = endOfQuoted(sql, i, "'", escaped)
    } else if (c === '"') {
      end = endOfQuoted(sql, i, '"', false)
    } else if (c === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i)
      end = newline === -1 ? sql.length : newline
    } else if (c === '/' && sql[i + 1] === '*') {
      end = endOfBlockComment(sql, i)
    } else if (c === '$' && !identifierPart.test(before)) {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))?.[0]
      if (tag) {
        const close = sql.indexOf(tag, i + tag.length)
        end = close === -1 ? sql.length : close + tag.length
      }
    } else if (c === '?') {
      out += replace({ name: undefined, text: '?' })
      i++
      continue
    } else if (c === '@' && identifierStart.test(sql[i + 1] ?? '') && !identifierPart.test(before)) {
      let j = i + 1
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j])) j++
      out += replace({ name: sql.slice(i + 1, j), text: sql.slice(i, j) })
      i = j
      continue
    }
    out += sql.slice(i, end)
    i = end
  }
  return out
}
