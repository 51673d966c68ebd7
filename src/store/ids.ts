// Identifiers: a type prefix and a time-sortable random part (ULID, Crockford base32), monotonic
// within this process so that ORDER BY id follows creation order.
import { closeSync, openSync, readSync } from 'node:fs'
import { nodeCrypto } from '../shared/crypto.ts'

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
let lastTime = -1
let lastRandom: number[] = []

function encodeTime(ms: number): string {
  let out = ''
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out
    ms = Math.floor(ms / 32)
  }
  return out
}

function nextRandom(time: number): number[] {
  if (time === lastTime) {
    // Same millisecond: increment the previous random part so ids stay ordered.
    const next = lastRandom.slice()
    for (let i = next.length - 1; i >= 0; i--) {
      if (next[i] < 31) {
        next[i]++
        break
      }
      next[i] = 0
    }
    return next
  }
  return Array.from(randomPart(), (b) => b & 31)
}

// One read of random bytes per 256 ids instead of one per id: ids are made on every request.
let pool: Buffer = Buffer.alloc(0)
let poolOffset = 0
function randomPart(): Buffer {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes4096()
    poolOffset = 0
  }
  poolOffset += 16
  return pool.subarray(poolOffset - 16, poolOffset)
}

// The kernel's CSPRNG (what node:crypto's own generator draws from), read through node:fs: the first
// answer of a start needs a request id, and node:crypto would cost it ~4 ms to load.
function randomBytes4096(): Buffer {
  const bytes = Buffer.allocUnsafe(4096)
  try {
    const fd = openSync('/dev/urandom', 'r')
    try {
      if (readSync(fd, bytes, 0, bytes.length, null) === bytes.length) return bytes
    } finally {
      closeSync(fd)
    }
  } catch {
    /* no /dev/urandom (a bare chroot, another OS): node:crypto below */
  }
  return nodeCrypto().randomBytes(4096)
}

export type IdPrefix = 'sig' | 'ord' | 'trd' | 'inc' | 'tok' | 'wh' | 'evt' | 'dlv' | 'ten' | 'usr' | 'req' | 'bt' | 'gwk' | 'ahk' | 'alr'

export function newId(prefix: IdPrefix): string {
  const time = Math.max(Date.now(), lastTime)
  lastRandom = nextRandom(time)
  lastTime = time
  return `${prefix}_${encodeTime(time)}${lastRandom.map((n) => ALPHABET[n]).join('')}`
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value.slice(prefix.length + 1))
}
