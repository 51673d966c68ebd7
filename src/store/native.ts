// Where better-sqlite3's native addon comes from.
// From source (tsx, tests) this returns undefined and better-sqlite3 loads its own prebuild from
// node_modules. Inside the single executable there is no node_modules and the SEA `require` only
// knows built-in modules, so build.mjs ships the addon as the SEA asset "better_sqlite3.node": it is
// written once to a cache file named by its hash (dlopen needs a real file) and loaded from there.
import { createHash, randomBytes } from 'node:crypto'
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getRawAsset, isSea } from 'node:sea'

export const ADDON_ASSET = 'better_sqlite3.node'

let loaded: object | undefined

/** The addon's exports for `new Database(file, { nativeBinding })`; undefined when not in the executable. */
export function nativeBinding(): object | undefined {
  if (!isSea()) return undefined
  loaded ??= loadAddon(Buffer.from(getRawAsset(ADDON_ASSET)))
  return loaded
}

function loadAddon(bytes: Buffer): object {
  const sha = createHash('sha256').update(bytes).digest('hex').slice(0, 16)
  let file: string
  try {
    file = cachedCopy(bytes, sha)
  } catch {
    // The shared cache folder is unusable or not ours (read-only /tmp, another user's folder):
    // a private folder nobody else can write into is always safe.
    file = join(mkdtempSync(join(tmpdir(), 'bulwark-')), ADDON_ASSET)
    writeFileSync(file, bytes, { mode: 0o700 })
  }
  const module = { exports: {} as object }
  process.dlopen(module, file)
  return module.exports
}

function cachedCopy(bytes: Buffer, sha: string): string {
  const uid = process.getuid?.() ?? 0
  const dir = process.env.XDG_CACHE_HOME
    ? join(process.env.XDG_CACHE_HOME, 'bulwark', sha)
    : join(tmpdir(), `bulwark-${uid}-${sha}`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  // We are about to run code from this folder: someone else's (or a world-writable) folder in a
  // shared /tmp could have been prepared to hand us a different library.
  const stat = lstatSync(dir)
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0) {
    throw new Error(`refusing cache folder ${dir}`)
  }
  const file = join(dir, ADDON_ASSET)
  if (!sameBytes(file, bytes)) {
    // Write aside, then rename: concurrent starts never dlopen a half-written file.
    const part = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
    try {
      writeFileSync(part, bytes, { mode: 0o700 })
      renameSync(part, file)
    } finally {
      rmSync(part, { force: true })
    }
  }
  return file
}

function sameBytes(file: string, bytes: Buffer): boolean {
  try {
    return readFileSync(file).equals(bytes)
  } catch {
    return false
  }
}
