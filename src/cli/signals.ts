// `bulwark signals verify`: recomputes every model's signal chain from the database file, or one
// export (GET /api/v1/signals/export) offline; with --head, also checks the chain against a head
// kept outside the data dir (SPEC 11: from a signal.published event or GET /api/v1/public/models).
import { readFileSync } from 'node:fs'
import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openStore } from '../store/open-store.ts'
import { query } from '../store/store.ts'
import { chainRows, GENESIS_HASH, verifyChain, type ChainedSignal, type ChainVerification } from '../signals/chain.ts'
import { backfillChains } from '../signals/chain-integrity.ts'

const modelIds = query<[], { id: string }>('SELECT id FROM models ORDER BY id')

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** The one line of a model's result. */
function line(modelId: string, v: ChainVerification, holder: string | undefined, head: string | undefined): string {
  if (!v.valid) return `${modelId}: BROKEN, ${v.problem}: ${v.detail} (after ${plural(v.count, 'intact signal')})`
  const asOf = v.as_of ? ` as of ${v.as_of}` : ''
  const found = holder ? `, contains head ${head} (${holder})` : ''
  return `${modelId}: intact, ${plural(v.count, 'signal')}, head ${v.head_hash}${asOf}${found}`
}

const FIELDS: Record<string, 'string' | 'number'> = {
  id: 'string',
  model_id: 'string',
  model_version: 'string',
  model_hash: 'string',
  chain_seq: 'number',
  pair: 'string',
  action: 'string',
  entry_price: 'number',
  as_of: 'string',
  created_at: 'string',
  prev_hash: 'string',
  hash: 'string',
}

/** The export in `file`, checked for shape only (whether it is intact is verifyChain's question). */
function readExport(file: string): { model_id: string; signals: ChainedSignal[] } {
  let parsed: { model_id?: unknown; signals?: unknown } | null
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new UsageError(`--file ${file}: ${error instanceof SyntaxError ? 'not JSON' : (error as Error).message}`)
  }
  if (typeof parsed?.model_id !== 'string' || !Array.isArray(parsed.signals)) {
    throw new UsageError(`--file ${file}: not a signals export (GET /api/v1/signals/export): needs model_id and signals`)
  }
  parsed.signals.forEach((s: Record<string, unknown> | null, i: number) => {
    for (const [field, type] of Object.entries(FIELDS)) {
      if (typeof s?.[field] !== type) throw new UsageError(`--file ${file}: signals[${i}].${field} is not a ${type}: not a signals export`)
    }
  })
  return { model_id: parsed.model_id, signals: parsed.signals }
}

export const signalsVerify: CliCommand = {
  name: 'signals verify',
  usage: 'bulwark signals verify [--model ID] [--head HASH] [--file EXPORT.json] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary:
    "recompute the signal hash chains (every model, or one) from the data dir, or an export file offline; exit 0 if intact, 1 naming the first broken signal. --head HASH (a head_hash kept outside the data dir, from a signal.published event or GET /api/v1/public/models): also exit 1 unless a chain contains that signal intact (without --model, any model's chain may hold it)",
  examples: [
    'bulwark signals verify',
    'bulwark signals verify --model trend-follower --head "$(cat trend-follower-head.txt)"',
    'bulwark signals verify --file export.json --head 3f1c...e9',
  ],
  async run(argv) {
    const args = parseArgs(argv, { model: 'string', head: 'string', file: 'string', ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const modelId = str(args, 'model')
    const file = str(args, 'file')
    const head = str(args, 'head')?.toLowerCase()
    if (head !== undefined && !/^[0-9a-f]{64}$/.test(head)) throw new UsageError('--head must be a signal chain head: 64 hex digits')
    let chains: { modelId: string; rows: ChainedSignal[] }[]
    if (file !== undefined) {
      if (modelId !== undefined || str(args, 'data-dir') !== undefined)
        throw new UsageError('--file verifies an export offline: --model and --data-dir do not apply')
      const exported = readExport(file)
      chains = [{ modelId: exported.model_id, rows: exported.signals }]
    } else {
      const { dataDir, databaseUrl } = commandConfig(args.flags)
      const store = await openStore({ dataDir, databaseUrl })
      try {
        await backfillChains(store) // as every command that opens the data dir: a chain from before sql/013 is linked first
        const ids = (await store.read.all(modelIds)).map((m) => m.id)
        if (modelId !== undefined && !ids.includes(modelId)) {
          process.stderr.write(`error: no model ${modelId}; models: ${ids.join(', ')}\n`)
          return 1
        }
        chains = []
        for (const id of ids) if (modelId === undefined || id === modelId) chains.push({ modelId: id, rows: await chainRows(store.read, id) })
      } finally {
        await store.close()
      }
    }
    let broken = 0
    let headFound = head === GENESIS_HASH
    for (const chain of chains) {
      const v = verifyChain(chain.rows)
      // Without --model the head may be in any chain, so it is looked for, not required, in each;
      // in an intact chain every hash was just recomputed.
      const holder = v.valid && head !== undefined ? chain.rows.find((r) => r.hash === head)?.id : undefined
      if (holder) headFound = true
      if (!v.valid) broken++
      process.stdout.write(`${line(chain.modelId, v, holder, head)}\n`)
    }
    if (broken) process.stderr.write(`error: ${broken} of ${plural(chains.length, 'signal chain')} broken\n`)
    if (head !== undefined && !headFound) {
      const scope = file !== undefined ? 'the export' : modelId !== undefined ? `the chain of ${modelId}` : 'any chain'
      process.stderr.write(
        `error: head ${head} not found in ${scope}${broken ? ' before its break' : ''}: truncated or rewritten after that head was taken (or the hash is of another data dir)\n`,
      )
      return 1
    }
    return broken ? 1 : 0
  },
}
