// Request security as Binance's REST docs describe it (SPEC 14): parameters from the query string
// and a form body (the query string wins), the X-MBX-APIKEY header, `signature` = HMAC-SHA256 hex
// of the exact bytes sent (query string without the signature, then the body), `timestamp` within
// `recvWindow` (5000 ms unless sent, at most 60000). One rule Binance does not have: a signature
// already seen within its window is refused (-1022), since a bot often reaches the gateway over a
// LAN without TLS and a captured request must not place its order twice.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { SecretBox } from '../../store/secret-box.ts'
import type { Queries } from '../../store/store.ts'
import { findGatewayKey, type GatewayKey } from '../keys.ts'
import { BinanceError, invalidValue, mandatory } from './errors.ts'

export type Params = Record<string, string>

export const replayed = () => new BinanceError(-1022, 'Signature for this request was already used: a replayed request is refused.')

const INVALID_KEY = () => new BinanceError(-2015, 'Invalid API-key, IP, or permissions for action.')

function parse(raw: string, into: Params, signatures: string[]): void {
  for (const [name, value] of new URLSearchParams(raw)) {
    if (name === 'signature') {
      signatures.push(value)
      continue
    }
    if (Object.hasOwn(into, name)) throw new BinanceError(-1101, 'Duplicate values for a parameter detected.')
    into[name] = value
  }
}

/** The request's parameters (query string over body, `signature` kept out) and the signature(s) sent. */
export function readParams(rawQuery: string, rawBody: string): { params: Params; signatures: string[] } {
  const query: Params = {}
  const body: Params = {}
  const signatures: string[] = []
  parse(rawQuery, query, signatures)
  parse(rawBody, body, signatures)
  if (signatures.length > 1) throw new BinanceError(-1101, 'Duplicate values for a parameter detected.')
  return { params: { ...body, ...query }, signatures }
}

/** What the client signed: the raw query string and body with their `signature=` parts taken out. */
function signedPayload(rawQuery: string, rawBody: string): string {
  const strip = (raw: string) =>
    raw
      .split('&')
      .filter((part) => part !== '' && !part.startsWith('signature='))
      .join('&')
  return strip(rawQuery) + strip(rawBody)
}

/**
 * Signatures seen, each until its request's window closes (after which -1021 refuses it anyway).
 * Binance signs the parameters, not the path: a bot may send the same parameters to two endpoints
 * in the same millisecond (ccxt's two margin-pair reads while loading markets), so one signature
 * may serve several reads. What it may never do is serve twice on one endpoint, or carry a change
 * (POST, PUT, DELETE) once it has been seen anywhere: a captured read must not become a cancel.
 */
export class ReplayGuard {
  private seen = new Map<string, { until: number; uses: Set<string> }>()
  private sweptAt = 0

  /** True when `signature` of `keyId` may serve this request (`method path`), which it then has. */
  firstTime(keyId: string, signature: string, method: string, path: string, until: number, now: number): boolean {
    if (now - this.sweptAt > 1000) {
      this.sweptAt = now
      for (const [id, seen] of this.seen) if (seen.until < now) this.seen.delete(id)
    }
    const id = `${keyId}:${signature}`
    const use = `${method} ${path}`
    const seen = this.seen.get(id)
    if (seen && seen.until >= now) {
      const changes = (u: string) => !u.startsWith('GET ')
      if (seen.uses.has(use) || changes(use) || [...seen.uses].some(changes)) return false
      seen.uses.add(use)
      return true
    }
    this.seen.set(id, { until, uses: new Set([use]) })
    return true
  }
}

export interface SignedRequest {
  method: string
  path: string
  header: string | string[] | undefined
  rawQuery: string
  rawBody: string
  params: Params
  signatures: string[]
}

/** A checked request: its key, and its signature with the time until which it could be replayed. */
export interface Signed {
  key: GatewayKey
  signature: string
  until: number
}

/**
 * The gateway key a signed request acts with, after every check Binance makes and the replay rule
 * (in this node's memory; a change also records its signature with it: ./replays.ts); throws
 * Binance's refusal otherwise.
 *
 * @example
 * const { key } = await authenticate(db, box, replays, { header: 'vmPUZE6m...', rawQuery: 'symbol=BTCUSDT&timestamp=1&signature=ab..', rawBody: '', ...readParams(q, b) }, Date.now())
 */
export async function authenticate(db: Queries, box: SecretBox, replays: ReplayGuard, request: SignedRequest, now: number): Promise<Signed> {
  const { header, params } = request
  if (typeof header !== 'string' || !/^[A-Za-z0-9]{1,128}$/.test(header)) throw new BinanceError(-2014, 'API-key format invalid.')
  const key = await findGatewayKey(db, header, box)
  if (!key) throw INVALID_KEY()
  const signature = request.signatures[0]
  if (!signature) throw mandatory('signature')
  if (params.timestamp === undefined || !/^[0-9]{1,20}$/.test(params.timestamp)) throw mandatory('timestamp')
  const expected = Buffer.from(createHmac('sha256', key.secret).update(signedPayload(request.rawQuery, request.rawBody)).digest('hex'))
  const given = Buffer.from(signature.toLowerCase())
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new BinanceError(-1022, 'Signature for this request is not valid.')
  const rawWindow = params.recvWindow ?? '5000'
  const recvWindow = Number(rawWindow)
  if (!/^[0-9]+(\.[0-9]{1,3})?$/.test(rawWindow)) throw invalidValue('recvWindow')
  if (recvWindow > 60_000) throw new BinanceError(-1131, 'recvWindow must be less than 60000.')
  // Timestamps may come in microseconds (16 digits), as Binance allows.
  const timestamp = params.timestamp.length >= 16 ? Number(params.timestamp) / 1000 : Number(params.timestamp)
  if (timestamp >= now + 1000) throw new BinanceError(-1021, "Timestamp for this request was 1000ms ahead of the server's time.")
  if (now - timestamp > recvWindow) throw new BinanceError(-1021, 'Timestamp for this request is outside of the recvWindow.')
  const until = timestamp + recvWindow + 1000
  if (!replays.firstTime(key.id, given.toString(), request.method, request.path, until, now)) throw replayed()
  return { key, signature: given.toString(), until }
}
