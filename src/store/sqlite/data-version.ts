// Whether the database may have changed, cheaply, whoever committed (this process or a CLI command).
// SQLite's WAL-index header, the first 48 bytes of the -shm file (https://www.sqlite.org/walformat.html
// 2.2.1), is rewritten by every commit of every connection: it is what SQLite itself reads to answer
// PRAGMA data_version. One pread of it costs a fraction of a statement, whose read transaction takes
// and releases file locks (two fcntl calls) every time.
import type Database from 'better-sqlite3'
import { closeSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'

const WAL_INDEX_VERSION = 3007000

export interface DataVersion {
  /** Differs whenever the database content may have changed since the last call. */
  read(): string
  close(): void
}

/**
 * The data dir's change mark: the WAL-index header where it can be read, else `connection`'s
 * total_changes() and data_version (the connection that writes, so its own commits count too).
 *
 * @example
 * const version = openDataVersion(dataDir, writer)
 * if (version.read() !== cachedAt) recompute()
 */
export function openDataVersion(dataDir: string, connection: Database.Database): DataVersion {
  const query = connection.prepare<[], [number, number]>('SELECT total_changes(), (SELECT data_version FROM pragma_data_version())').raw()
  let fd: number | undefined
  const header = Buffer.alloc(48)
  try {
    fd = openSync(join(dataDir, 'bulwark.db-shm'), 'r')
    // A live wal-index in this machine's byte order (iVersion, isInit); anything else uses the query.
    if (!(readSync(fd, header, 0, 48, 0) === 48 && header.readUInt32LE(0) === WAL_INDEX_VERSION && header[12] === 1)) {
      closeSync(fd)
      fd = undefined
    }
  } catch {
    fd = undefined // no -shm file: the query
  }
  return {
    read() {
      if (fd !== undefined) {
        try {
          readSync(fd, header, 0, 48, 0)
          return header.toString('latin1')
        } catch {
          /* fall through to the query */
        }
      }
      const [changes, version] = query.get()!
      return `${changes}:${version}`
    },
    close() {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    },
  }
}
