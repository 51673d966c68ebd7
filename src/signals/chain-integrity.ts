// Keeping the signal chain whole across upgrades and tampering (SPEC 11): the back-fill links the
// signals written before sql/013 (chain columns described in ./chain.ts), and the start-up check puts
// back the immutability triggers on signals if they are missing or altered. Like the incident
// triggers (risk/integrity.ts), a repair is never quiet: whoever could drop them could also have
// rewritten the chain meanwhile, which only a head kept outside the data dir can reveal.
import { query, type Store } from '../store/store.ts'
import { describeRepair, isDamaged, triggerGuard, type TriggerCheck } from '../store/triggers.ts'
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
const unchainedModels = query<[], { model_id: string }>('SELECT DISTINCT model_id FROM signals WHERE hash IS NULL')
const unchainedOf = query<[string], UnchainedRow>(
  'SELECT id, model_id, pair, action, entry_price, as_of, created_at FROM signals WHERE model_id = ? AND hash IS NULL ORDER BY as_of, id',
)
const modelOf = query<[string], { version: string; hash: string }>('SELECT version, hash FROM models WHERE id = ?')
const backfillDone = query<[], { done_at: string }>('SELECT done_at FROM signal_chain_backfill')
const markBackfillDone = query<[string]>('INSERT INTO signal_chain_backfill (id, done_at) VALUES (1, ?)')
const setLink = query(
  'UPDATE signals SET model_version = @model_version, model_hash = @model_hash, chain_seq = @chain_seq, prev_hash = @prev_hash, hash = @hash WHERE id = @id',
)

/**
 * Links every signal written before sql/013 onto its model's chain, in the order they were written
 * (as_of, then id), with the model's version and hash from the models table. Run by openApp after
 * the migrations, once: a row inserted later without a link is tampering, left for verify to name.
 */
export async function backfillChains(store: Store, now = new Date()): Promise<number> {
  if (await store.read.get(backfillDone)) return 0
  const linked = await store.write(async (tx) => {
    if (await tx.get(backfillDone)) return 0 // another process did it meanwhile
    await tx.run(markBackfillDone, [now.toISOString()])
    let count = 0
    for (const { model_id } of await tx.all(unchainedModels)) {
      const model = await tx.get(modelOf, [model_id])
      if (!model) throw new Error(`signals of ${model_id}, which is not in the models table`)
      const linker = await chainLinker(tx, model_id)
      for (const row of await tx.all(unchainedOf, [model_id])) {
        const content = { ...row, model_version: model.version, model_hash: model.hash }
        await tx.run(setLink, { id: row.id, model_version: model.version, model_hash: model.hash, ...linker.link(content) })
        count++
      }
    }
    return count
  })
  if (linked) log({ level: 'info', msg: 'signal chain back-filled', signals: linked })
  return linked
}

const guard = triggerGuard(CHAIN_SQL, 'signals')

/**
 * Checks the triggers on signals against sql/013 by name and text, puts them back as that file
 * creates them and logs an error naming what it found. Returns what it found (all empty: nothing done).
 */
export async function checkSignalTriggers(store: Store): Promise<TriggerCheck> {
  if (!isDamaged(await guard.inspect(store.read))) return { missing: [], altered: [], unexpected: [] }
  const found = await store.write((tx) => guard.restore(tx))
  if (!isDamaged(found)) return found
  const what = describeRepair(found)
  log({
    level: 'error',
    msg: `signal immutability triggers restored: ${what}; the chains may have been rewritten while they were off: verify them against heads kept outside the data dir`,
    ...found,
  })
  return found
}
