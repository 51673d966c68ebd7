// SQLite-style parameters, named (@name) or positional (?), to PostgreSQL's ($1, $2, ...), once per
// query text: quoted strings ('...', E'...', $tag$...$tag$), quoted identifiers and comments are left
// alone, and a name used twice is one parameter. A text uses one style, not both.

export interface Positional {
  text: string
  /** The name of $1, $2, ... in order; for `?` parameters, their indexes ('0', '1', ...). */
  names: string[]
}

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

export function toPositional(sql: string): Positional {
  const names: string[] = []
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
      const index = names.push(String(names.length))
      out += `$${index}`
      i++
      continue
    } else if (c === '@' && identifierStart.test(sql[i + 1] ?? '') && !identifierPart.test(before)) {
      let j = i + 1
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j])) j++
      const name = sql.slice(i + 1, j)
      let index = names.indexOf(name)
      if (index === -1) index = names.push(name) - 1
      out += `$${index + 1}`
      i = j
      continue
    }
    out += sql.slice(i, end)
    i = end
  }
  return { text: out, names }
}

/** The values of `names` from params, in order; a name missing from params throws, as SQLite does. */
export function valuesOf(names: string[], params: object | undefined): unknown[] {
  if (names.length === 0) return []
  if (Array.isArray(params)) {
    if (params.length !== names.length) throw new RangeError(`${names.length} parameters expected, ${params.length} given`)
    return params
  }
  const record = (params ?? {}) as Record<string, unknown>
  return names.map((name) => {
    if (!(name in record)) throw new RangeError(`missing named parameter "${name}"`)
    return record[name]
  })
}
