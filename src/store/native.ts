// Where better-sqlite3's native addon comes from.
// From source (tsx, tests) this returns undefined and better-sqlite3 loads its own prebuild from
// node_modules. Inside the single executable there is no node_modules and the SEA `require` only
// knows built-in modules, so build.mjs ships the addon as the SEA asset "better_sqlite3.node": it is
// written once to a cache file named by its hash (dlopen needs a real file) and loaded from there.
// A backtest worker thread loads that same file (nativeAddonPath, addonFromFile): a worker has its
// own module registry, and better-sqlite3's addon is context-aware, so it may be loaded into each.
import { nodeCrypto } from '../shared/crypto.ts'
import { lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getRawAsset, isSea } from 'node:sea'

const ADDON_ASSET = 'better_sqlite3.node'

// The asset's sha256, computed by build.mjs so that a start does not spend ~3 ms hashing 2 MB.
declare const BULWARK_ADDON_SHA256: string | undefined

let loaded: { exports: object; file: string } | undefined

/** The addon's exports for `new Database(file, { nativeBinding })`; undefined when not in the executable. */
export function nativeBinding(): object | undefined {
  if (!isSea()) return undefined
  loaded ??= loadAddon(Buffer.from(getRawAsset(ADDON_ASSET)))
  return loaded.exports
}

/** The file the addon was loaded from, for a worker thread's addonFromFile; undefined when not in the executable. */
export function nativeAddonPath(): string | undefined {
  return nativeBinding() && loaded?.file
}

/** The addon's exports, loaded from `file` (in a worker thread: the main thread's nativeAddonPath()). */
export function addonFromFile(file: string): object {
  const module = { exports: {} as object }
  try {
    process.dlopen(module, file)
  } catch (error) {
    // The usual causes are a host older than the prebuilt addon, or a cache folder on a noexec
    // mount; say what is needed, not just what broke.
    throw new Error(
      `cannot load the SQLite engine from ${file} (${(error as Error).message}); bulwark needs glibc 2.34+ ` +
        'and libstdc++ from GCC 11+ (Debian 12, Ubuntu 22.04, RHEL 9 or newer), and XDG_CACHE_HOME or ' +
        'TMPDIR on a filesystem that allows executables',
    )
  }
  return module.exports
}

function loadAddon(bytes: Buffer): { exports: object; file: string } {
  const sha = (typeof BULWARK_ADDON_SHA256 === 'string' ? BULWARK_ADDON_SHA256 : nodeCrypto().createHash('sha256').update(bytes).digest('hex')).slice(0, 16)
  let file: string
  try {
    file = cachedCopy(bytes, sha)
  } catch {
    // The cache folder is unusable or not ours (not writable, another user's, world-writable):
    // a private folder nobody else can write into is always safe. It is removed at exit, not once
    // loaded: a backtest worker thread started later loads the same file.
    const scratch = mkdtempSync(join(tmpdir(), 'bulwark-'))
    file = join(scratch, ADDON_ASSET)
    writeFileSync(file, bytes, { mode: 0o700 })
    process.once('exit', () => rmSync(scratch, { recursive: true, force: true }))
  }
  return { exports: addonFromFile(file), file }
}

function cachedCopy(bytes: Buffer, sha: string): string {
  const uid = process.getuid?.() ?? 0
  const dir = process.env.XDG_CACHE_HOME ? join(process.env.XDG_CACHE_HOME, 'bulwark', sha) : join(tmpdir(), `bulwark-${uid}-${sha}`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  // We are about to run code from this folder: someone else's (or a world-writable) folder in a
  // shared /tmp could have been prepared to hand us a different library.
  const stat = lstatSync(dir)
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0) {
    throw new Error(`refusing cache folder ${dir}`)
  }
  const file = join(dir, ADDON_ASSET)
  if (!sameSize(file, bytes)) {
    // Write aside, then rename: concurrent starts never dlopen a half-written file.
    const part = `${file}.${process.pid}.${nodeCrypto().randomBytes(4).toString('hex')}`
    try {
      writeFileSync(part, bytes, { mode: 0o700 })
      renameSync(part, file)
    } finally {
      rmSync(part, { force: true })
    }
  }
  return file
}

// The folder is named by the addon's hash and is ours alone (checked above: our uid, no group or
// other write), and the file only ever comes from the rename of a complete write: a file of the
// right size there is the addon. Comparing the 2 MB byte for byte cost every start ~2.5 ms.
function sameSize(file: string, bytes: Buffer): boolean {
  try {
    return statSync(file).size === bytes.length
  } catch {
    return false
  }
}
