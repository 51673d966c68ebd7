// SQLite-style parameters, named (@name) or positional (?), to PostgreSQL's ($1, $2, ...), once per
// query text (../sql-parameters.ts finds them); a name used twice is one parameter. A text uses one
// style, not both.
import { rewriteParameters } from '../sql-parameters.ts'

export interface Positional {
  text: string
  /** The name of $1, $2, ... in order; for `?` parameters, their indexes ('0', '1', ...). */
  names: string[]
}

export function toPositional(sql: string): Positional {
  const names: string[] = []
  const text = rewriteParameters(sql, ({ name }) => {
    if (name === undefined) return `$${names.push(String(names.length))}`
    let index = names.indexOf(name)
    if (index === -1) index = names.push(name) - 1
    return `$${index + 1}`
  })
  return { text, names }
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
