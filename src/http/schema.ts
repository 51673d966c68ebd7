// A JSON Schema subset that validates request bodies and query strings and is also what the OpenAPI
// document publishes, so the two cannot drift apart.
import { DomainError, validationError, type FieldError } from '../shared/errors.ts'
import { textProblem } from '../shared/text.ts'
import { dateProblem, dateTimeProblem, isDate, isDateTime } from '../shared/dates.ts'

export type Schema =
  | {
      type: 'string'
      enum?: readonly string[]
      minLength?: number
      maxLength?: number
      pattern?: string
      format?: 'date-time' | 'date' | 'email' | 'uri'
      nullable?: boolean
      description?: string
    }
  | { type: 'integer' | 'number'; minimum?: number; maximum?: number; exclusiveMinimum?: number; nullable?: boolean; description?: string }
  | { type: 'boolean'; nullable?: boolean; description?: string }
  | { type: 'array'; items: Schema; minItems?: number; maxItems?: number; uniqueItems?: boolean; description?: string }
  | {
      type: 'object'
      properties: Record<string, Schema>
      required?: readonly string[]
      additionalProperties?: boolean | Schema
      nullable?: boolean
      minProperties?: number
      description?: string
    }

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/
/** The smallest positive normal double: below it (but 0) a number is subnormal. */
const MIN_NORMAL = 2.2250738585072014e-308

const patterns = new Map<string, RegExp>()
function compiled(pattern: string): RegExp {
  let re = patterns.get(pattern)
  if (!re) {
    re = new RegExp(pattern)
    patterns.set(pattern, re)
  }
  return re
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function check(value: unknown, schema: Schema, field: string, errors: FieldError[], unknown: string[]): void {
  if (value === null && 'nullable' in schema && schema.nullable) return
  const at = field || 'body'
  switch (schema.type) {
    case 'string': {
      if (typeof value !== 'string') {
        errors.push({ field: at, message: `must be a string, got ${typeName(value)}` })
        return
      }
      if (schema.enum && !schema.enum.includes(value)) {
        errors.push({ field: at, message: `must be one of ${schema.enum.join(', ')}` })
        return
      }
      if (schema.minLength !== undefined && value.length < schema.minLength)
        errors.push({ field: at, message: `must be at least ${schema.minLength} characters` })
      else if (schema.maxLength !== undefined && value.length > schema.maxLength)
        errors.push({ field: at, message: `must be at most ${schema.maxLength} characters` })
      else if (schema.pattern && !compiled(schema.pattern).test(value)) errors.push({ field: at, message: `must match ${schema.pattern}` })
      else if (schema.format === 'date-time' && !isDateTime(value)) errors.push({ field: at, message: dateTimeProblem(value)! })
      else if (schema.format === 'date' && !isDate(value)) errors.push({ field: at, message: dateProblem(value)! })
      else if (schema.format === 'email' && !EMAIL.test(value)) errors.push({ field: at, message: 'must be an e-mail address' })
      return
    }
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        errors.push({ field: at, message: `must be a finite number, got ${typeName(value)}` })
        return
      }
      if (schema.type === 'integer' && !Number.isSafeInteger(value)) {
        errors.push({ field: at, message: 'must be an integer' })
        return
      }
      if (schema.minimum !== undefined && value < schema.minimum) errors.push({ field: at, message: `must be >= ${schema.minimum}` })
      else if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
        errors.push({ field: at, message: `must be > ${schema.exclusiveMinimum}` })
      else if (schema.maximum !== undefined && value > schema.maximum) errors.push({ field: at, message: `must be <= ${schema.maximum}` })
      // A subnormal number (5e-324) is no amount anyone means, and arithmetic on it loses everything.
      else if (value !== 0 && Math.abs(value) < MIN_NORMAL) errors.push({ field: at, message: `must be 0 or at least ${MIN_NORMAL} in magnitude` })
      return
    }
    case 'boolean':
      if (typeof value !== 'boolean') errors.push({ field: at, message: `must be a boolean, got ${typeName(value)}` })
      return
    case 'array': {
      if (!Array.isArray(value)) {
        errors.push({ field: at, message: `must be an array, got ${typeName(value)}` })
        return
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        errors.push({ field: at, message: `must have at least ${schema.minItems} items` })
        return
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        errors.push({ field: at, message: `must have at most ${schema.maxItems} items` })
        return
      }
      // Items first: only items the schema accepts are compared, so a hostile deeply nested item
      // never reaches JSON.stringify (whose recursion would overflow the stack).
      const before = errors.length + unknown.length
      value.forEach((item, i) => {
        check(item, schema.items, `${at}[${i}]`, errors, unknown)
      })
      if (errors.length + unknown.length > before) return
      if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) errors.push({ field: at, message: 'must not repeat items' })
      return
    }
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        errors.push({ field: at, message: `must be an object, got ${typeName(value)}` })
        return
      }
      const record = value as Record<string, unknown>
      for (const name of schema.required ?? []) {
        if (!Object.hasOwn(record, name)) errors.push({ field: field ? `${field}.${name}` : name, message: 'is required' })
      }
      for (const name of Object.keys(record)) {
        const path = field ? `${field}.${name}` : name
        const sub = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined
        if (sub) check(record[name], sub, path, errors, unknown)
        else if (typeof schema.additionalProperties === 'object') check(record[name], schema.additionalProperties, path, errors, unknown)
        else if (schema.additionalProperties !== true) unknown.push(path)
      }
      if (schema.minProperties !== undefined && Object.keys(record).length < schema.minProperties) {
        errors.push({ field: at, message: `must have at least ${schema.minProperties} field(s)` })
      }
    }
  }
}

/** Validates a parsed body; throws unknown_field or validation_failed with every problem found. */
export function validate<T>(value: unknown, schema: Schema): T {
  const errors: FieldError[] = []
  const unknown: string[] = []
  check(value, schema, '', errors, unknown)
  if (unknown.length) {
    throw new DomainError('unknown_field', `unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, {
      errors: unknown.map((field) => ({ field, message: 'is not a known field' })),
    })
  }
  if (errors.length) {
    throw new DomainError('validation_failed', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors })
  }
  return value as T
}

/** Query strings arrive as text: integers and booleans are converted before validation. */
export function validateQuery<T>(query: Record<string, string | string[]>, params: Record<string, Schema>): T {
  const out: Record<string, unknown> = {}
  let given = false
  for (const _ in query) {
    given = true
    break
  }
  if (!given) return out as T // query parameters are all optional: nothing to check
  const errors: FieldError[] = []
  for (const [name, raw] of Object.entries(query)) {
    for (const text of [name, ...(Array.isArray(raw) ? raw : [raw])]) {
      const problem = textProblem(text)
      if (problem) throw validationError(JSON.stringify(name).slice(1, -1), text === name ? `query parameter name ${problem}` : problem)
    }
    const schema = Object.hasOwn(params, name) ? params[name] : undefined
    if (!schema)
      throw new DomainError('unknown_field', `unknown query parameter: ${name}`, { errors: [{ field: name, message: 'is not a known query parameter' }] })
    if (Array.isArray(raw)) {
      errors.push({ field: name, message: 'must be given once' })
      continue
    }
    if (schema.type === 'integer' || schema.type === 'number') {
      out[name] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw
    } else if (schema.type === 'boolean') {
      out[name] = raw === 'true' ? true : raw === 'false' ? false : raw
    } else {
      out[name] = raw
    }
  }
  if (errors.length) throw new DomainError('validation_failed', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors })
  return validate<T>(out, { type: 'object', properties: params, additionalProperties: false })
}
