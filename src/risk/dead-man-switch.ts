// The dead man's switch (SPEC 9): armed with a timeout, pushed by heartbeats, and when a deadline
// passes with no heartbeat the kill switch fires by itself. Table dead_man_switches
// (sql/008_breakers.sql): tenant_id, status ARMED|DISARMED|FIRED, timeout_seconds, action
// CANCEL_AND_PAUSE|FLATTEN, model_id (NULL: the fleet), armed_at, armed_by, last_heartbeat_at,
// deadline, fired_at, incident_id (the incident of the latest arming, disarming or firing). The
// deadline is stored, not kept in a timer, so a restart after it passed fires at once
// (./dead-man-switch-watch.ts).
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { RecordedRefusal } from '../http/route.ts'
import { MODEL_ID_PATTERN, findModel } from '../models/catalogue.ts'
import { recordEvent } from '../webhooks/events.ts'
import { appendIncident, findIncident, incidentRef } from './incidents.ts'
import { operateKillSwitch } from './kill-switch.ts'

const DEAD_MAN_SWITCH_ACTOR = 'dead-man-switch@localhost'
const ACTIONS = ['CANCEL_AND_PAUSE', 'FLATTEN'] as const
const ARM_PATH = 'PUT /api/v1/risk/dead-man-switch'

export type DeadManSwitchRequest = FromSchema<typeof deadManSwitchRequestSchema>
export type DeadManSwitch = FromSchema<typeof deadManSwitchSchema>

interface SwitchRow {
  tenant_id: string
  status: 'ARMED' | 'DISARMED' | 'FIRED'
  timeout_seconds: number
  action: (typeof ACTIONS)[number]
  model_id: string | null
  armed_at: string
  armed_by: string
  last_heartbeat_at: string | null
  deadline: string
  fired_at: string | null
  incident_id: string | null
}

const COLUMNS = 'tenant_id, status, timeout_seconds, action, model_id, armed_at, armed_by, last_heartbeat_at, deadline, fired_at, incident_id'
const byTenant = query<[string], SwitchRow>(`SELECT ${COLUMNS} FROM dead_man_switches WHERE tenant_id = ?`)
// On PostgreSQL a heartbeat on one node and the watch on another run at once: the row stays locked
// until the change commits, so only one of them sees it ARMED and overdue (SQLite runs one at a time).
const lockedByTenant = query<[string], SwitchRow>(`SELECT ${COLUMNS} FROM dead_man_switches WHERE tenant_id = ? FOR UPDATE`)
const upsertArmed = query<Omit<SwitchRow, 'status' | 'last_heartbeat_at' | 'fired_at'>, SwitchRow>(`
  INSERT INTO dead_man_switches (${COLUMNS})
  VALUES (@tenant_id, 'ARMED', @timeout_seconds, @action, @model_id, @armed_at, @armed_by, NULL, @deadline, NULL, @incident_id)
  ON CONFLICT (tenant_id) DO UPDATE SET status = 'ARMED', timeout_seconds = excluded.timeout_seconds, action = excluded.action,
    model_id = excluded.model_id, armed_at = excluded.armed_at, armed_by = excluded.armed_by, last_heartbeat_at = NULL,
    deadline = excluded.deadline, fired_at = NULL, incident_id = excluded.incident_id
  RETURNING ${COLUMNS}`)
const pushDeadline = query<[string, string, string], SwitchRow>(
  `UPDATE dead_man_switches SET last_heartbeat_at = ?, deadline = ? WHERE tenant_id = ? AND status = 'ARMED' RETURNING ${COLUMNS}`,
)
const setDisarmed = query<[string, string], SwitchRow>(
  `UPDATE dead_man_switches SET status = 'DISARMED', incident_id = ? WHERE tenant_id = ? RETURNING ${COLUMNS}`,
)
const setFired = query<[string, string, string], SwitchRow>(
  `UPDATE dead_man_switches SET status = 'FIRED', fired_at = ?, incident_id = ? WHERE tenant_id = ? RETURNING ${COLUMNS}`,
)
// The partial index on deadline WHERE status = 'ARMED' serves this in deadline order.
const armedByDeadline = query<[], { tenant_id: string; deadline: string }>(
  "SELECT tenant_id, deadline FROM dead_man_switches WHERE status = 'ARMED' ORDER BY deadline",
)

function deadlineAfter(now: Date, seconds: number): string {
  return new Date(now.getTime() + seconds * 1000).toISOString()
}

function describe(row: Pick<SwitchRow, 'action' | 'timeout_seconds'>): string {
  return `${row.action} after ${row.timeout_seconds} s without a heartbeat`
}

function show(row: SwitchRow | undefined): DeadManSwitch {
  if (!row) {
    return {
      status: 'DISARMED',
      timeout_seconds: null,
      action: null,
      model_id: null,
      armed_at: null,
      last_heartbeat_at: null,
      deadline: null,
      fired_at: null,
      incident_id: null,
    }
  }
  return {
    status: row.status,
    timeout_seconds: row.timeout_seconds,
    action: row.action,
    model_id: row.model_id ?? 'all',
    armed_at: row.armed_at,
    last_heartbeat_at: row.last_heartbeat_at,
    // A disarmed switch has no deadline running; a fired one keeps the deadline it missed.
    deadline: row.status === 'DISARMED' ? null : row.deadline,
    fired_at: row.fired_at,
    incident_id: row.incident_id,
  }
}

/** The tenant's switch; a tenant that never armed one sees it DISARMED, with nulls. */
export async function deadManSwitch(db: Queries, tenantId: string): Promise<DeadManSwitch> {
  return show(await db.get(byTenant, [tenantId]))
}

/** Arms the switch, or re-arms it with a new timeout and a deadline counted from now; records DEAD_MAN_SWITCH_ARMED. */
export async function armDeadManSwitch(tx: Tx, tenantId: string, request: DeadManSwitchRequest, actor: string, now: Date): Promise<DeadManSwitch> {
  const model = request.model_id === undefined || request.model_id === 'all' ? null : request.model_id
  if (model !== null && !(await findModel(tx, model))) {
    throw validationError('model_id', `unknown model ${JSON.stringify(model)}; use a model id from GET /api/v1/models, or all`)
  }
  return await tx.savepoint(async () => {
    await fireIfOverdue(tx, tenantId, now) // a deadline already missed is honoured, then the new one runs
    const before = await tx.get(byTenant, [tenantId])
    const deadline = deadlineAfter(now, request.timeout_seconds)
    const replaced = before?.status === 'ARMED' ? `re-armed, replacing ${describe(before)} (deadline ${before.deadline}): ` : ''
    const incident = await appendIncident(tx, {
      tenantId,
      action: 'DEAD_MAN_SWITCH_ARMED',
      actor,
      status: 'RECORDED',
      modelId: model ?? 'all',
      reason: `${replaced}${describe(request)}; deadline ${deadline}`,
      now,
    })
    const row = await tx.get(upsertArmed, {
      tenant_id: tenantId,
      timeout_seconds: request.timeout_seconds,
      action: request.action,
      model_id: model,
      armed_at: now.toISOString(),
      armed_by: actor,
      deadline,
      incident_id: incident.id,
    })
    return show(row)
  })
}

/**
 * Pushes the deadline to now + timeout; 409 dead_man_switch_not_armed unless the switch is armed. A
 * heartbeat that arrives after the deadline, before the watch got to it, rescues nothing: the
 * switch fires here, and the refusal that says so commits with it.
 */
export async function heartbeatDeadManSwitch(tx: Tx, tenantId: string, now: Date): Promise<DeadManSwitch | RecordedRefusal> {
  if (await fireIfOverdue(tx, tenantId, now)) return new RecordedRefusal(notArmed(await tx.get(byTenant, [tenantId])))
  const row = await tx.get(byTenant, [tenantId])
  if (row?.status !== 'ARMED') throw notArmed(row)
  return show(await tx.get(pushDeadline, [now.toISOString(), deadlineAfter(now, row.timeout_seconds), tenantId]))
}

/** Why a heartbeat finds nothing to push, and what to do about it. */
function notArmed(row: SwitchRow | undefined): DomainError {
  const arm = `arm it with ${ARM_PATH}`
  if (!row) return new DomainError('dead_man_switch_not_armed', `the dead man's switch was never armed: ${arm}`)
  if (row.status === 'DISARMED') {
    return new DomainError('dead_man_switch_not_armed', `the dead man's switch is DISARMED (incident ${row.incident_id}): ${arm}`)
  }
  return new DomainError(
    'dead_man_switch_not_armed',
    `the dead man's switch is FIRED: no heartbeat by its deadline ${row.deadline}, it fired at ${row.fired_at} (incident ${row.incident_id}) and ` +
      `${row.action} halted ${row.model_id ? `model ${row.model_id}` : 'the fleet'}; ${arm} again (trading stays paused until the kill switch's RESUME)`,
  )
}

/**
 * Disarms an armed switch (DEAD_MAN_SWITCH_DISARMED); a switch that is not armed is answered
 * unchanged, and so is one whose deadline passed before the disarm came: it fires first.
 */
export async function disarmDeadManSwitch(tx: Tx, tenantId: string, actor: string, now: Date): Promise<DeadManSwitch> {
  return await tx.savepoint(async () => {
    await fireIfOverdue(tx, tenantId, now)
    const row = await tx.get(byTenant, [tenantId])
    if (row?.status !== 'ARMED') return show(row)
    const incident = await appendIncident(tx, {
      tenantId,
      action: 'DEAD_MAN_SWITCH_DISARMED',
      actor,
      status: 'RECORDED',
      modelId: row.model_id ?? 'all',
      reason: `disarmed ${describe(row)}; deadline was ${row.deadline}, ${row.last_heartbeat_at ? `last heartbeat ${row.last_heartbeat_at}` : 'no heartbeat since arming'}`,
      now,
    })
    return show(await tx.get(setDisarmed, [incident.id, tenantId]))
  })
}

/**
 * Fires the tenant's switch if it is armed and its deadline is not after `now`: the kill switch
 * (actor dead-man-switch@localhost, incident DEAD_MAN_SWITCH_FIRED), the FIRED status and the
 * risk.dead_man_switch.fired event, in the caller's transaction. Returns the fired switch, or
 * undefined when there was nothing to fire (a heartbeat or a disarm got there first).
 */
export async function fireIfOverdue(tx: Tx, tenantId: string, now: Date): Promise<DeadManSwitch | undefined> {
  return await tx.savepoint(async () => {
    const row = await tx.get(tx.engine === 'postgres' ? lockedByTenant : byTenant, [tenantId])
    if (row?.status !== 'ARMED' || row.deadline > now.toISOString()) return undefined
    const heartbeat = row.last_heartbeat_at ? `last heartbeat ${row.last_heartbeat_at}` : 'no heartbeat since arming'
    const result = await operateKillSwitch(tx, tenantId, { action: row.action, pause: true, model_id: row.model_id ?? 'all' }, DEAD_MAN_SWITCH_ACTOR, now, {
      action: 'DEAD_MAN_SWITCH_FIRED',
      reason: `no heartbeat by the deadline ${row.deadline} (timeout ${row.timeout_seconds} s, ${heartbeat}, armed at ${row.armed_at} by ${row.armed_by})`,
    })
    const fired = show(await tx.get(setFired, [now.toISOString(), result.incident_id, tenantId]))
    const incident = (await findIncident(tx, tenantId, result.incident_id))!
    await recordEvent(tx, tenantId, 'risk.dead_man_switch.fired', { ...fired, canceled_orders: result.canceled_orders, incident: incidentRef(incident) }, now)
    return fired
  })
}

/**
 * The armed switches due by `now` and the next deadline after them (ms since the epoch), in deadline
 * order, leaving out the tenants `skip` names (a firing that failed, retried later).
 */
export async function dueSwitches(db: Queries, now: Date, skip: ReadonlySet<string> = new Set()): Promise<{ due: string[]; next: number | undefined }> {
  const at = now.toISOString()
  const due: string[] = []
  for (const { tenant_id, deadline } of await db.all(armedByDeadline)) {
    if (skip.has(tenant_id)) continue
    if (deadline > at) return { due, next: Date.parse(deadline) }
    due.push(tenant_id)
  }
  return { due, next: undefined }
}

export const deadManSwitchRequestSchema = {
  type: 'object',
  required: ['timeout_seconds', 'action'],
  additionalProperties: false,
  properties: {
    timeout_seconds: {
      type: 'integer',
      minimum: 10,
      maximum: 86400,
      description: 'seconds without a heartbeat before the switch fires; the deadline is now + this, pushed by every heartbeat',
    },
    action: { type: 'string', enum: ACTIONS, description: 'what the kill switch does when it fires (FLATTEN also closes open trades at the last price)' },
    model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN, description: 'one model, or all (the default) for the whole fleet' },
  },
} as const satisfies Schema

const timestamp = (description: string) => ({ type: 'string', format: 'date-time', nullable: true, description }) as const

export const deadManSwitchSchema = {
  type: 'object',
  required: ['status', 'timeout_seconds', 'action', 'model_id', 'armed_at', 'last_heartbeat_at', 'deadline', 'fired_at', 'incident_id'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ARMED', 'DISARMED', 'FIRED'], description: 'DISARMED also for a tenant that never armed it (every other field null)' },
    timeout_seconds: { type: 'integer', nullable: true },
    action: { type: 'string', enum: ACTIONS, nullable: true },
    model_id: { type: 'string', nullable: true, description: 'all denotes the whole fleet' },
    armed_at: timestamp('when it was last armed'),
    last_heartbeat_at: timestamp('the last heartbeat since then'),
    deadline: timestamp('ARMED: when it fires without a heartbeat; FIRED: the deadline it missed; DISARMED: null'),
    fired_at: timestamp('when the kill switch fired'),
    incident_id: { type: 'string', pattern: '^inc_', nullable: true, description: 'the incident of the latest arming, disarming or firing' },
  },
} as const satisfies Schema
