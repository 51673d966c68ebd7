// `bulwark backup FILE`: an online, consistent copy of the database, safe while `serve` writes.
import { existsSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { openConnection } from '../store/db.ts'
import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { dataDirFrom, STORE_FLAGS } from '../config.ts'

// SQLite restarts a stepwise backup whenever another connection (the server) writes in between, so
// under steady writes it might never finish. Copying every page in one step reads from one snapshot
// instead: consistent, and WAL mode lets the server go on writing meanwhile.
const ALL_PAGES = 0x7fffffff

export const backup: CliCommand = {
  name: 'backup',
  usage: 'bulwark backup FILE [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: 'write an online, consistent copy of the database to FILE (safe while serve runs)',
  examples: ['bulwark backup /var/backups/bulwark-$(date -u +%F).db --data-dir /var/lib/bulwark'],

  async run(argv: string[]): Promise<number> {
    const args = parseArgs(argv, { ...STORE_FLAGS })
    if (args.positional.length !== 1) throw new UsageError('backup takes exactly one FILE')
    const dataDir = dataDirFrom(str(args, 'data-dir'))
    const source = resolve(dataDir, 'bulwark.db')
    const target = resolve(args.positional[0])

    if (str(args, 'database') ?? process.env.BULWARK_DATABASE_URL)
      return fail('backup copies the embedded SQLite database; a PostgreSQL database is backed up with its own tools (pg_dump, pgBackRest)')
    if (!existsSync(source)) return fail(`no database at ${source}`)
    if (!existsSync(dirname(target))) return fail(`folder ${dirname(target)} does not exist`)
    if (existsSync(target) && statSync(target).isDirectory()) return fail(`${target} is a folder; give a file name`)
    if (isLiveFile(target, source)) return fail(`${target} is the live database; back up to another file`)

    // Copy beside the target, then rename: FILE is either the previous file or a whole new copy.
    const part = join(dirname(target), `.${basename(target)}.${process.pid}.partial`)
    const db = openConnection(source)
    try {
      const { totalPages } = await db.backup(part, { progress: () => ALL_PAGES })
      renameSync(part, target)
      console.log(`backup written: ${target} (${totalPages} pages, ${statSync(target).size} bytes)`)
      return 0
    } catch (error) {
      return fail(`backup failed: ${(error as Error).message}`)
    } finally {
      for (const leftover of [part, `${part}-journal`, `${part}-wal`, `${part}-shm`]) rmSync(leftover, { force: true })
      db.close()
    }
  },
}

/** Whether `target` names the database or one of its -wal/-shm companions, links resolved. */
function isLiveFile(target: string, source: string): boolean {
  const real = join(realpathSync(dirname(target)), basename(target))
  const live = realpathSync(source)
  return real === live || real.startsWith(`${live}-`)
}

function fail(message: string): number {
  console.error(message)
  return 1
}
