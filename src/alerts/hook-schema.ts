// What the alert hooks' API (SPEC 16) takes and answers: a hook (never its secret), a new hook with
// its secret once, and what arrived at a hook. The schemas are the validator's and the OpenAPI
// document's both (src/http/schema.ts).
import type { Schema } from '../http/schema.ts'

/** The oldest an alert's `timestamp` may be: TradingView's {{timenow}} has whole seconds and the sender takes up to 3 s. */
export const MAX_AGE_RANGE = { minimum: 5, maximum: 86_400 } as const
/** More than TradingView's four published addresses with room to spare; a longer list is a mistake. */
export const MAX_SOURCE_CIDRS = 64

const isoTime = { type: 'string', format: 'date-time' } as const

/** POST /api/v1/alert-hooks: unknown fields refused, as everywhere. */
export const newHookSchema = {
  type: 'object',
  required: ['name', 'mode'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, description: 'a label for people: which strategy or chart sends to it' },
    mode: { type: 'string', enum: ['PAPER', 'LIVE'], description: "the mode of the orders its alerts place; LIVE needs the tenant's venue connected" },
    model_id: {
      type: 'string',
      maxLength: 100,
      nullable: true,
      description: 'the model its orders count against (its pause, its positions); null or absent for none',
    },
    max_age_seconds: {
      type: 'integer',
      ...MAX_AGE_RANGE,
      description: 'an alert whose timestamp is older than this is refused (400 alert_stale); default 60',
    },
    source_cidrs: {
      type: 'array',
      maxItems: MAX_SOURCE_CIDRS,
      items: { type: 'string', minLength: 1, maxLength: 50 },
      description: 'addresses or CIDRs alerts must come from (the client address, read as --trusted-proxy says); absent or [] for any',
    },
  },
} as const satisfies Schema

const hookProperties = {
  id: { type: 'string', pattern: '^ahk_' },
  name: { type: 'string' },
  url: {
    type: 'string',
    format: 'uri',
    description: "where the sender posts its alerts: --public-url (else this request's own address) + /hooks/alerts/{id}",
  },
  mode: { type: 'string', enum: ['PAPER', 'LIVE'] },
  model_id: { type: 'string', nullable: true },
  max_age_seconds: { type: 'integer', ...MAX_AGE_RANGE },
  source_cidrs: { type: 'array', items: { type: 'string' }, description: 'where alerts may come from; [] for any address' },
  created_at: isoTime,
  revoked_at: { ...isoTime, nullable: true, description: 'null while the hook is live; a revoked hook answers 404' },
  refused_count: {
    type: 'integer',
    minimum: 0,
    description: 'alerts refused before anything was recorded: a wrong secret (401) or a source outside source_cidrs (403)',
  },
} as const satisfies Record<string, Schema>

const hookRequired = ['id', 'name', 'url', 'mode', 'model_id', 'max_age_seconds', 'source_cidrs', 'created_at', 'revoked_at', 'refused_count'] as const

/** A hook as lists, GET and DELETE show it: never the secret. */
export const hookSchema = { type: 'object', additionalProperties: false, required: hookRequired, properties: hookProperties } as const satisfies Schema

/** What a creation answers, once: the hook and the secret every message carries. */
export const createdHookSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...hookRequired, 'secret'],
  properties: {
    ...hookProperties,
    secret: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description: 'the "secret" field of every message; shown here and in an idempotent replay within 24 h, never again',
    },
  },
} as const satisfies Schema

/** One alert that reached a hook with the right secret. */
export const alertSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'hook_id', 'alert_id', 'received_at', 'outcome', 'code', 'reason', 'order_id', 'message'],
  properties: {
    id: { type: 'string', pattern: '^alr_' },
    hook_id: { type: 'string', pattern: '^ahk_' },
    alert_id: { type: 'string', nullable: true, description: 'the message\'s own "id" (null when none could be read)' },
    received_at: isoTime,
    outcome: { type: 'string', enum: ['ACCEPTED', 'REFUSED', 'DUPLICATE'], description: 'DUPLICATE: an id already accepted within 24 h' },
    code: { type: 'string', nullable: true, description: "the refusal's problem code (alert_stale, trading_paused, risk_limit_exceeded, ...)" },
    reason: { type: 'string', nullable: true, description: "the refusal's detail, as the sender was answered" },
    order_id: { type: 'string', nullable: true, description: "the order it placed (a duplicate: the first one's)" },
    message: { type: 'string', description: 'the message as it came, its secret taken out' },
  },
} as const satisfies Schema
