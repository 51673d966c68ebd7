// The route registry: each feature's route file calls defineRoute at import. The same entries build
// the itty-router table, the guard, request validation and the OpenAPI document.
import type { IncomingMessage } from 'node:http'
import type { Access } from '../auth/guard.ts'
import type { Principal } from '../auth/scopes.ts'
import type { Schema } from './schema.ts'
import type { HttpError } from './errors.ts'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface Ctx<Q = any, B = any> {
  params: Record<string, string>
  query: Q
  body: B
  /** The caller; public routes get an anonymous principal they must not use. */
  principal: Principal
  requestId: string
  now: Date
  url: URL
  req: IncomingMessage
  /** Extra response headers (Link, ...). */
  headers: Record<string, string>
}

/** A non-JSON answer (the public page, metrics) or a JSON one with another status. */
export class Raw {
  constructor(readonly status: number, readonly contentType: string, readonly body: string | Buffer, readonly headers: Record<string, string> = {}) {}
}

/**
 * Returned (not thrown) by a handler whose refusal must still be recorded: its writes (an incident,
 * an event) commit, and the caller gets the error. A thrown HttpError rolls everything back.
 */
export class RecordedRefusal {
  constructor(readonly error: HttpError) {}
}

export interface RouteSpec<Q = any, B = any> {
  method: Method
  path: string                       // itty-router pattern: /api/v1/webhooks/:id
  summary: string
  tag: string
  access: Access
  query?: Record<string, Schema>
  body?: Schema
  response: Schema | null            // the 200 body; null for non-JSON routes
  contentType?: string               // for non-JSON routes
  /** Fields blanked out of an idempotent replay: secrets shown once are never stored. */
  redactOnReplay?: string[]
  /** Not part of the public contract (kept out of the OpenAPI document). */
  hidden?: boolean
  /** Served ahead of queued requests (the kill switch); see src/http/priority.ts. */
  urgent?: boolean
  /** Asynchronous checks (a DNS lookup) that run before the handler and outside its transaction. */
  check?: (ctx: Ctx<Q, B>) => Promise<void>
  handler: (ctx: Ctx<Q, B>) => unknown
}

export const routes: RouteSpec[] = []

export function defineRoute<Q = any, B = any>(spec: RouteSpec<Q, B>): RouteSpec<Q, B> {
  routes.push(spec as RouteSpec)
  return spec
}
