// What the API shows of an order and takes for a new one (SPEC 5, 10, 14): the schemas every
// route, event and the OpenAPI document share.
import type { Schema } from '../http/schema.ts'
import { PAIR_PATTERN } from '../http/filters.ts'
import { MODEL_ID_PATTERN } from '../models/catalogue.ts'

export const ORDER_STATUSES = ['PENDING', 'OPEN', 'PARTIALLY_FILLED', 'UNKNOWN', 'FILLED', 'CANCELED', 'REJECTED'] as const
export const ORDER_SOURCES = ['api', 'automation', 'kill_switch', 'gateway', 'alert'] as const
export const STOP_TRIGGERS = ['STOP_LOSS', 'TAKE_PROFIT'] as const

const nullableNumber = { type: 'number', nullable: true } as const
const nullableTime = { type: 'string', format: 'date-time', nullable: true } as const

export const orderSchema = {
  type: 'object',
  required: [
    'id',
    'pair',
    'side',
    'type',
    'quantity',
    'notional_usd',
    'limit_price',
    'model_id',
    'status',
    'reduce_only',
    'created_at',
    'filled_at',
    'canceled_at',
    'fill_price',
    'fees_usd',
    'slippage_usd',
    'trade_id',
    'mode',
    'client_order_id',
    'filled_quantity',
    'reject_reason',
    'reference_price',
    'source',
    'gateway_key_id',
    'alert_hook_id',
    'bot_client_order_id',
    'stop_price',
    'stop_trigger',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^ord_' },
    pair: { type: 'string' },
    side: { type: 'string', enum: ['BUY', 'SELL'] },
    type: { type: 'string', enum: ['MARKET', 'LIMIT'] },
    quantity: { type: 'number', nullable: true, description: 'base units; null for a BUY sized by notional_usd until it fills, then the filled quantity' },
    notional_usd: { type: 'number', nullable: true, description: 'the USD size requested, if the order was sized that way' },
    limit_price: nullableNumber,
    model_id: { type: 'string', nullable: true },
    status: {
      type: 'string',
      enum: ORDER_STATUSES,
      description:
        'OPEN and PARTIALLY_FILLED: a LIVE order the venue holds; UNKNOWN: a LIVE order sent that the venue could not be asked about for longer than its recvWindow + 10 s (still working; reject_reason says why; the lookups go on); CANCELED keeps filled_quantity',
    },
    reduce_only: { type: 'boolean', description: 'true for a SELL: it only closes open LONG trades, so it is accepted while trading is paused' },
    created_at: { type: 'string', format: 'date-time' },
    filled_at: nullableTime,
    canceled_at: nullableTime,
    fill_price: { type: 'number', nullable: true, description: 'execution price, slippage included' },
    fees_usd: nullableNumber,
    slippage_usd: nullableNumber,
    trade_id: { type: 'string', nullable: true, description: 'the trade a BUY opened, or the first trade a SELL closed' },
    mode: { type: 'string', enum: ['PAPER', 'LIVE'] },
    client_order_id: { type: 'string', description: "the order's name on the venue: its id" },
    filled_quantity: { type: 'number', description: 'base units filled so far, gross of a fee the venue took in the base asset' },
    reject_reason: {
      type: 'string',
      nullable: true,
      description: "REJECTED: the venue's code and message, or why the broker refused it; UNKNOWN: what the last lookup met",
    },
    reference_price: {
      type: 'number',
      description: "the price the pre-trade checks used: the last close for PAPER, the venue's price for LIVE (slippage is measured against it)",
    },
    source: { type: 'string', enum: ORDER_SOURCES, description: 'who placed it: api, automation, kill_switch (FLATTEN), gateway or alert' },
    gateway_key_id: { type: 'string', nullable: true, description: 'the gateway key a gateway order came through' },
    alert_hook_id: { type: 'string', nullable: true, description: 'the alert hook an alert order came from' },
    bot_client_order_id: {
      type: 'string',
      nullable: true,
      description: "a gateway order's newClientOrderId as the bot sent it (the venue knows the order by client_order_id)",
    },
    stop_price: {
      type: 'number',
      nullable: true,
      description:
        "a stop or take-profit SELL a bot placed through the gateway: the venue's price that triggers it (a LIMIT one then rests at limit_price, a MARKET one sells at market)",
    },
    stop_trigger: {
      type: 'string',
      enum: STOP_TRIGGERS,
      nullable: true,
      description: 'STOP_LOSS: triggered when the price falls to stop_price; TAKE_PROFIT: when it rises to it; null for every other order',
    },
  },
} as const satisfies Schema

export const orderInputSchema = {
  type: 'object',
  required: ['pair', 'side', 'type'],
  additionalProperties: false,
  properties: {
    pair: { type: 'string', pattern: PAIR_PATTERN, description: 'BASE/QUOTE, e.g. BTC/USDT' },
    side: { type: 'string', enum: ['BUY', 'SELL'] },
    type: { type: 'string', enum: ['MARKET', 'LIMIT'] },
    quantity: { type: 'number', exclusiveMinimum: 0, maximum: 1e12, description: 'base units; give this or notional_usd' },
    notional_usd: { type: 'number', exclusiveMinimum: 0, maximum: 1e12, description: 'size in USD; give this or quantity' },
    limit_price: { type: 'number', exclusiveMinimum: 0, maximum: 1e12, description: 'required for LIMIT, refused for MARKET' },
    model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN, description: 'attributes the order (and its trade) to a model' },
    mode: { type: 'string', enum: ['PAPER', 'LIVE'], description: "PAPER (the default) or LIVE: placed on the tenant's venue (PUT /api/v1/venue)" },
  },
} as const satisfies Schema
