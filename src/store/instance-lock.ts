// One `bulwark serve` per data dir: two servers on one database would both publish, both run the
// broker and both send webhooks. Other CLI commands share the database freely and take no lock.
//
// The lock is an open exclusive SQLite transaction on DIR/serve.lock, i.e. an fcntl lock that the
// kernel drops when the holder dies, even by SIGKILL: a crashed server leaves nothing stale, and a
// reused pid can never keep the next server out. DIR/serve.pid only names the holder in messages.
import Database from 'better-sqlite3'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { nativeBinding } from './native.ts'

/** Takes the data dir for this process, or throws naming the pid that holds it. Returns release. */
export function acquireInstanceLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const pidFile = join(dataDir, 'serve.pid')
  const lock = new Database(join(dataDir, 'serve.lock'), { nativeBinding: nativeBinding() as never, timeout: 0 })
  try {
    lock.exec('BEGIN EXCLUSIVE')
  } catch (error) {
    lock.close()
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error
    const holder = readPid(pidFile)
    throw new Error(`another bulwark serve (pid ${holder ?? 'unknown'}) is already running on data dir ${dataDir}; stop it first or choose another --data-dir`)
  }
  // Written aside then renamed, so a starting rival never reads half a pid.
  const part = `${pidFile}.${process.pid}`
  writeFileSync(part, `${process.pid}\n`)
  renameSync(part, pidFile)

  let held = true
  return () => {
    if (!held) return
    held = false
    if (readPid(pidFile) === process.pid) rmSync(pidFile, { force: true })
    lock.close()
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}
