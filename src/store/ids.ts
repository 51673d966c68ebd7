// Identifiers: a type prefix and a time-sortable random part (ULID, Crockford base32), monotonic
// within this process so that ORDER BY id follows creation order.
import { randomBytes } from 'node:crypto'

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

// One randomBytes call per 256 ids instead of one per id: ids are made on every request.
let pool = Buffer.alloc(0)
let poolOffset = 0
function randomPart(): Buffer {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(4096)
    poolOffset = 0
  }
  poolOffset += 16
  return pool.subarray(poolOffset - 16, poolOffset)
}

export type IdPrefix = 'sig' | 'ord' | 'trd' | 'inc' | 'tok' | 'wh' | 'evt' | 'dlv' | 'ten' | 'usr' | 'req' | 'bt'

export function newId(prefix: IdPrefix): string {
  const time = Math.max(Date.now(), lastTime)
  lastRandom = nextRandom(time)
  lastTime = time
  return `${prefix}_${encodeTime(time)}${lastRandom.map((n) => ALPHABET[n]).join('')}`
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value.slice(prefix.length + 1))
}
