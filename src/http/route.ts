// Route specs: each feature's routes file exports a list of them and src/app.ts passes every list to
// the server. The same entries build the itty-router table, the guard, request validation and the
// OpenAPI document.
import type { IncomingMessage } from 'node:http'
import type { FromSchema, JSONSchema } from 'json-schema-to-ts'
import type { Schema } from './schema.ts'
import type { ErrorCode, DomainError } from '../shared/errors.ts'
import type { Queries, Store, Tx } from '../store/store.ts'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/**
 * Who is calling: resolved once per request by the guard, used by every tenant-bound query. Scope
 * and role names are auth's (src/auth/scopes.ts, src/tenants/users.ts); here they are only text.
 */
export interface Principal {
  kind: 'api_key' | 'session'
  tenantId: string
  credentialId: string // API key id or the session's user id: the rate-limit bucket
  userId: string | null
  email: string // incident actor
  role: string | null // sessions only
  scopes: readonly string[] // API keys only
}

/**
 * Who may call a route. `scopes`: an API key needs one of them (absent: any valid key). `write`: a
 * session needs role owner or admin. `sessionOnly`: API keys are refused (403 session_required).
 */
export type Access = 'public' | { scopes?: readonly string[]; write?: boolean; sessionOnly?: boolean }

/** What checks a caller for a route that is not public: auth's (src/auth/guard.ts), handed to the server by src/app.ts. */
export interface Guard {
  /** The caller behind an Authorization header; throws `unauthenticated` (or `service_unavailable`). */
  authenticate(authorization: string | undefined, now: Date): Promise<Principal>
  /** Throws when this caller may not use a route with this access. */
  authorize(principal: Principal, access: Exclude<Access, 'public'>): void
}

export interface Ctx<Q = unknown, B = unknown, P extends Record<string, string> = Record<string, string>> {
  params: P
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
  /** This request's view of the database: the change's transaction (tx) for a write, committed reads for a GET. */
  db: Queries
  /** The change's transaction (POST, PUT, PATCH, DELETE); every call throws in a handler that has none. */
  tx: Tx
  /** The store, for the one handler that opens its own transactions (a route with `transaction: false`). */
  store: Store
}

/** A non-JSON answer (the public page, metrics) or a JSON one with another status. */
export class Raw {
  constructor(
    readonly status: number,
    readonly contentType: string,
    readonly body: string | Buffer,
    readonly headers: Record<string, string> = {},
  ) {}
}

/**
 * Returned (not thrown) by a handler whose refusal must still be recorded: its writes (an incident,
 * an event) commit, and the caller gets the error. A thrown DomainError rolls everything back.
 */
export class RecordedRefusal {
  constructor(readonly error: DomainError) {}
}

/** A non-200 answer whose body is the route's `response` schema, not problem+json. */
export interface OwnStatus {
  status: number
  description: string
}

export interface RouteSpec<Q = unknown, B = unknown, P extends Record<string, string> = Record<string, string>> {
  method: Method
  path: string // itty-router pattern: /api/v1/webhooks/:id
  summary: string
  tag: string
  access: Access
  query?: Record<string, Schema>
  body?: Schema
  response: Schema | null // the 200 body; null for non-JSON routes
  /**
   * What the handler and the domain code it calls can refuse, read from their code (the pipeline's
   * own refusals for a route of this kind are added by src/http/openapi.ts); and any other status
   * the route answers with its own `response` body rather than a problem (health's 503).
   */
  errors?: readonly (ErrorCode | OwnStatus)[]
  contentType?: string // for non-JSON routes
  /** The answer shows a secret once: its idempotency record is sealed, so a replay can show it again. */
  sealOnReplay?: true
  /**
   * Handlers of POST, PUT, PATCH and DELETE run in one write transaction (ctx.tx), the Store's
   * write(). `false` for one that opens its own or writes nothing and must await something other
   * than the database (login's scrypt, a venue's answer).
   */
  transaction?: false
  /** Not part of the public contract (kept out of the OpenAPI document). */
  hidden?: boolean
  /** Served ahead of queued requests (the kill switch); see src/http/priority.ts. */
  urgent?: boolean
  /** Asynchronous checks (a DNS lookup) that run before the handler and outside its transaction. */
  // Methods, not function-typed fields: a list of routes of different query and body types is one
  // RouteSpec[] (method parameters are compared bivariantly).
  check?(ctx: Ctx<Q, B, P>): Promise<void>
  handler(ctx: Ctx<Q, B, P>): unknown
}

type ParamNames<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<Rest>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never

/** The parameters of an itty-router pattern: `/api/v1/webhooks/:id/deliveries/:dlv` -> `{ id: string; dlv: string }`. */
type PathParams<Path extends string> = { [K in ParamNames<Path>]: string }

// Where S is still a type parameter, TypeScript works FromSchema<S> out from the bound of S (to
// compare two QueryOf, to type a handler's result before R is known), and FromSchema of a whole
// recursive schema union never ends ("excessively deep"). So no type parameter here is bounded: each
// schema goes through TypeOf, which defers until it is a known schema. That the schemas are Schemas,
// the subset our validator knows, is still checked: RouteDefinition keeps RouteSpec's query, body
// and response.

/** The type of what a schema accepts (json-schema-to-ts, at the type level only). */
type TypeOf<S> = S extends JSONSchema ? FromSchema<S> : never

/**
 * A query after validateQuery: every parameter optional, each of its schema's type. (Wrapped in a
 * conditional type: two instances of a plain mapped type are compared by the variance of Q, which
 * TypeScript measures on placeholder types, through FromSchema again.)
 */
export type QueryOf<Q> = Q extends unknown ? { -readonly [K in keyof Q]?: TypeOf<Q[K]> } : never

/** A body after validation: its schema's type (undefined for a route that takes none). */
type BodyOf<B> = B extends undefined ? undefined : TypeOf<B>

/**
 * What a handler may return: its `response` schema's type, a Raw answer or a RecordedRefusal (only
 * a Raw one for a non-JSON route, `response: null`); or a Promise of it. A literal in the answer is
 * typed before R is known, so it widens: write it `'Bearer' as const`, or give the value its type.
 */
type AnswerOf<R> = MaybePromise<R extends null ? Raw : TypeOf<R> | Raw | RecordedRefusal>
type MaybePromise<T> = T | Promise<T>

/**
 * What defineRoute takes: a RouteSpec whose path, query, body and response are also kept as literal
 * types, so that the handler's context and its result are typed from them.
 */
type RouteDefinition<Path extends string, Q, B, R> = Omit<RouteSpec, 'path' | 'check' | 'handler'> & {
  path: Path
  query?: Q
  body?: B
  response: R
  check?(ctx: Ctx<QueryOf<Q>, BodyOf<B>, PathParams<Path>>): Promise<void>
  handler(ctx: Ctx<QueryOf<Q>, BodyOf<B>, PathParams<Path>>): AnswerOf<R>
}

/**
 * A route spec, typed from itself: `ctx.params` from the path pattern, `ctx.query` and `ctx.body`
 * from their schemas, and the handler's result checked against the `response` schema's type.
 * Registers nothing: each feature exports its list, and src/app.ts hands every list to the server,
 * so what the API serves is what app.ts names.
 *
 * @example
 * const getModel = defineRoute({ method: 'GET', path: '/api/v1/models/:id', summary: 'One model', tag: 'models',
 *   access: {}, response: modelSchema, handler: (ctx) => getModel(ctx.params.id) }) // must return a Model
 */
export function defineRoute<const Path extends string, const Q = Record<never, never>, const B = undefined, const R = null>(
  spec: RouteDefinition<Path, Q, B, R>,
): RouteSpec<QueryOf<Q>, BodyOf<B>, PathParams<Path>>
// The one signature callers see is the typed one above; this one only hands the spec back.
export function defineRoute(spec: RouteSpec): RouteSpec {
  return spec
}
