// Shared by the alert tests (SPEC 16): hooks made through the real API (POST /api/v1/alert-hooks,
// an owner's session), and alerts sent exactly as TradingView sends them: a POST of the message as
// the body, typed application/json when it is JSON and text/plain otherwise, with no header of
// ours. A sender elsewhere is simulated with --trusted-proxy 127.0.0.1/32 and X-Forwarded-For, so
// nothing is ever sent anywhere but 127.0.0.1.
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Api } from '../venue/fixture-live.ts'
import { withDb } from '../trading/market.ts'

/** TradingView's published webhook addresses include this one: a source that is never us. */
export const TRADINGVIEW_ADDRESS = '52.89.214.238'

export interface Hook {
  id: string
  secret: string
  url: string
  /** The path a sender posts to: /hooks/alerts/{id}. */
  path: string
}

/** A hook made by the owner whose session is `jwt`; `body` is the API's (name, mode, model_id, ...). */
export async function createHook(api: Api, jwt: string, body: Record<string, unknown>): Promise<Hook> {
  const made = await api('POST', '/api/v1/alert-hooks', { token: jwt, body })
  assert.is(made.status, 200, made.text)
  const { id, secret, url } = made.json
  assert.match(id, /^ahk_/)
  return { id, secret, url, path: new URL(url).pathname }
}

export interface AlertAnswer {
  status: number
  headers: Headers
  text: string
  json: any
}

/**
 * Posts `message` to the hook as TradingView would: JSON.stringify'd (or `raw` as it is), typed
 * `application/json` or `text/plain; charset=utf-8`; `from` adds an X-Forwarded-For hop (believed
 * only with --trusted-proxy).
 */
export async function sendAlert(
  server: { url: string },
  path: string,
  message: unknown,
  options: { type?: 'json' | 'text'; raw?: string; from?: string; method?: string } = {},
): Promise<AlertAnswer> {
  const headers: Record<string, string> = { 'content-type': options.type === 'json' ? 'application/json' : 'text/plain; charset=utf-8' }
  if (options.from) headers['x-forwarded-for'] = options.from
  const res = await fetch(server.url + path, { method: options.method ?? 'POST', headers, body: options.raw ?? JSON.stringify(message) })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** Checks a refusal's problem+json: status, code, and that its detail names `field` when given. */
export function refused(answer: AlertAnswer, status: number, code: string, field?: string): void {
  assert.is(answer.status, status, answer.text)
  assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/)
  assert.is(answer.json.code, code, answer.text)
  assert.is(answer.json.status, status)
  assert.match(answer.json.request_id, /^req_/)
  if (field) {
    assert.match(answer.json.detail, new RegExp(`\\b${field}\\b`), `the detail names ${field}: ${answer.json.detail}`)
  }
}

export interface LoggedAlert {
  id: string
  alert_id: string | null
  outcome: 'ACCEPTED' | 'REFUSED' | 'DUPLICATE'
  code: string | null
  reason: string | null
  order_id: string | null
  message: string
}

/** What the hook's log shows, newest first (GET /api/v1/alert-hooks/{id}/alerts). */
export async function alertLog(api: Api, jwt: string, hookId: string): Promise<LoggedAlert[]> {
  const res = await api('GET', `/api/v1/alert-hooks/${hookId}/alerts`, { token: jwt })
  assert.is(res.status, 200, res.text)
  return res.json
}

/** The hook as the API lists it (refused_count, revoked_at). */
export async function hookOf(api: Api, jwt: string, hookId: string): Promise<any> {
  const res = await api('GET', `/api/v1/alert-hooks/${hookId}`, { token: jwt })
  assert.is(res.status, 200, res.text)
  return res.json
}

/** Rows of the alerts table for a hook, as an auditor reads them (the oracle for "recorded nothing"). */
export function alertRows(server: Server, hookId: string): Promise<LoggedAlert[]> {
  return withDb(server, (db) => db.all('SELECT id, alert_id, outcome, code, reason, order_id, message FROM alerts WHERE hook_id = ? ORDER BY seq', [hookId]))
}

/** A TradingView-style message: a fresh id, {{timenow}}'s ISO time, numbers as placeholders write them. */
let sequence = 0
export function message(hook: Hook, fields: Record<string, unknown>): Record<string, unknown> {
  return { secret: hook.secret, id: `tv-${Date.now()}-${++sequence}`, timestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), ...fields }
}

/**
 * Waits, when the current minute has fewer than `ms` left, for the next one: the per-hook rate is
 * counted in fixed one-minute windows, and a burst must not straddle two.
 */
export async function freshMinute(ms = 15_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < ms) await new Promise((resolve) => setTimeout(resolve, left + 50))
}
