// Keeping the signal chain whole across upgrades and tampering (SPEC 11): the back-fill links the
// signals written before sql/013 (chain columns described in ./chain.ts), and the start-up check puts
// back the immutability triggers on signals if they are missing or altered. Like the incident
// triggers (risk/integrity.ts), a repair is never quiet: whoever could drop them could also have
// rewritten the chain meanwhile, which only a head kept outside the data dir can reveal.
import { assetText } from '../store/assets.ts'
import { db, statement, write } from '../store/db.ts'
import { log } from '../shared/log.ts'
import { chainLinker } from './chain.ts'

const CHAIN_SQL = 'sql/013_signal_chain.sql'

interface UnchainedRow {
  id: string
  model_id: string
  pair: string
  action: 'ENTER_LONG' | 'HOLD' | 'EXIT_LONG'
  entry_price: number
  as_of: string
  created_at: string
}

// signals_unchained is a partial index over hash IS NULL: empty (and free to ask) once chained.
const unchainedModels = statement<[], { model_id: string }>('SELECT DISTINCT model_id FROM signals WHERE hash IS NULL')
const unchainedOf = statement<[string], UnchainedRow>(
  'SELECT id, model_id, pair, action, entry_price, as_of, created_at FROM signals WHERE model_id = ? AND hash IS NULL ORDER BY as_of, id',
)
const modelOf = statement<[string], { version: string; hash: string }>('SELECT version, hash FROM models WHERE id = ?')
const setLink = statement(
  'UPDATE signals SET model_version = @model_version, model_hash = @model_hash, chain_seq = @chain_seq, prev_hash = @prev_hash, hash = @hash WHERE id = @id',
)

/**
 * Links every signal still without a link onto its model's chain, in the order they were written
 * (as_of, then id), with the model's version and hash from the models table. Run by openApp after
 * the migrations; does nothing (one index probe) once every signal is chained.
 */
export function backfillChains(): number {
  if (unchainedModels().all().length === 0) return 0
  const linked = write(() => {
    let count = 0
    for (const { model_id } of unchainedModels().all()) {
      const model = modelOf().get(model_id)
      if (!model) throw new Error(`signals of ${model_id}, which is not in the models table`)
      const linker = chainLinker(model_id)
      for (const row of unchainedOf().all(model_id)) {
        const content = { ...row, model_version: model.version, model_hash: model.hash }
        setLink().run({ id: row.id, model_version: model.version, model_hash: model.hash, ...linker.link(content) })
        count++
      }
    }
    return count
  })
  if (linked) log({ level: 'info', msg: 'signal chain back-filled', signals: linked })
  return linked
}

export interface TriggerCheck {
  missing: string[]
  altered: string[]
  unexpected: string[]
}

/** name -> CREATE TRIGGER text, as SQLite keeps it in sqlite_master (the statement without its `;`). */
function expectedTriggers(): Map<string, string> {
  const expected = new Map<string, string>()
  for (const match of assetText(CHAIN_SQL).matchAll(/^CREATE TRIGGER (\w+) [^\n]*\bON signals\b[\s\S]*?\bEND(?=;)/gm)) expected.set(match[1], match[0])
  if (expected.size === 0) throw new Error(`${CHAIN_SQL} creates no trigger on signals`)
  return expected
}

function inspect(expected: Map<string, string>): TriggerCheck {
  const present = new Map(
    db()
      .prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = 'signals'")
      .all()
      .map((t) => [t.name, t.sql]),
  )
  return {
    missing: [...expected.keys()].filter((name) => !present.has(name)),
    altered: [...expected.keys()].filter((name) => present.has(name) && present.get(name) !== expected.get(name)),
    // Any other trigger goes too: a BEFORE INSERT ... RAISE(IGNORE) would make new signals vanish.
    unexpected: [...present.keys()].filter((name) => !expected.has(name)),
  }
}

const isDamaged = (check: TriggerCheck) => check.missing.length + check.altered.length + check.unexpected.length > 0

/**
 * Checks the triggers on signals against sql/013 by name and text, puts them back as that file
 * creates them and logs an error naming what it found. Returns what it found (all empty: nothing done).
 */
export function checkSignalTriggers(): TriggerCheck {
  const expected = expectedTriggers()
  if (!isDamaged(inspect(expected))) return { missing: [], altered: [], unexpected: [] }
  const found = write(() => {
    // Looked at again under the write lock: a CLI may have changed the file meanwhile.
    const found = inspect(expected)
    for (const name of [...found.altered, ...found.unexpected]) db().exec(`DROP TRIGGER "${name.replaceAll('"', '""')}"`)
    for (const name of [...found.missing, ...found.altered]) db().exec(expected.get(name)!)
    return found
  })
  if (!isDamaged(found)) return found
  const what = [
    ...found.missing.map((name) => `${name} missing, recreated`),
    ...found.altered.map((name) => `${name} altered, recreated`),
    ...found.unexpected.map((name) => `unexpected trigger ${name} dropped`),
  ].join(', ')
  log({
    level: 'error',
    msg: `signal immutability triggers restored: ${what}; the chains may have been rewritten while they were off: verify them against heads kept outside the data dir`,
    ...found,
  })
  return found
}
