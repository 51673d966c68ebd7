// How PostgreSQL's values are read on every connection Bulwark opens (the Store's pool, store copy,
// a backtest worker's client): int8 (count(*), bigint columns) and numeric (what sum() and avg() of
// integers give) as numbers, as SQLite gives them. Left as strings, `n + 1` would be "11".
import pg from 'pg'

export const numberTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as never)) as typeof pg.types.getTypeParser,
}
