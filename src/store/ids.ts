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
      if (next[i] < 31) { next[i]++; break }
      next[i] = 0
    }
    return next
  }
  const bytes = randomBytes(16)
  return Array.from(bytes, (b) => b & 31)
}

export type IdPrefix = 'sig' | 'ord' | 'trd' | 'inc' | 'tok' | 'wh' | 'evt' | 'dlv' | 'ten' | 'usr' | 'req'

export function newId(prefix: IdPrefix): string {
  const time = Math.max(Date.now(), lastTime)
  lastRandom = nextRandom(time)
  lastTime = time
  return `${prefix}_${encodeTime(time)}${lastRandom.map((n) => ALPHABET[n]).join('')}`
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && value.startsWith(prefix + '_') && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value.slice(prefix.length + 1))
}
