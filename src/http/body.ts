// Request bodies: application/json only, at most 64 KiB, strict UTF-8.
import type { IncomingMessage } from 'node:http'
import { DomainError, validationError } from '../shared/errors.ts'
import { collectBody, hasBody } from '../shared/request-body.ts'
import { findTextProblem } from '../shared/text.ts'

export const BODY_LIMIT = 64 * 1024
const decoder = new TextDecoder('utf-8', { fatal: true })

/** The raw body text, or undefined when the request has none. */
export async function readBody(req: IncomingMessage): Promise<string | undefined> {
  if (!hasBody(req)) return undefined
  const type = req.headers['content-type']
  if (!type || !/^application\/json\s*(;|$)/i.test(type)) {
    throw new DomainError('unsupported_media_type', `Content-Type must be application/json, got ${type ? JSON.stringify(type.slice(0, 100)) : 'none'}`)
  }
  const bytes = await collectBody(req, BODY_LIMIT, {
    tooLarge,
    // The client went away or broke the framing mid-body: its fault, not a server error.
    incomplete: () =>
      new DomainError('validation_failed', 'the request body ended before it was complete', { errors: [{ field: 'body', message: 'is incomplete' }] }),
  })
  try {
    return decoder.decode(bytes)
  } catch {
    throw new DomainError('invalid_json', 'request body is not valid UTF-8')
  }
}

function tooLarge(): DomainError {
  return new DomainError('payload_too_large', `request body is larger than ${BODY_LIMIT} bytes`, { headers: { Connection: 'close' } })
}

/** The parsed body; every string in it (keys too) is well-formed Unicode without NUL, or 400. */
export function parseJson(text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'unparseable'
    throw new DomainError('invalid_json', `request body is not valid JSON: ${reason}`)
  }
  const problem = findTextProblem(value)
  if (problem) throw validationError(problem.field, problem.message)
  return value
}

/**
 * The body of an operation that takes none: empty or `{}`, else 400 (invalid_json for what is not
 * JSON, unknown_field for an object with fields, validation_failed for any other JSON value).
 *
 * @example
 * checkNoBody('{}', 'POST /api/v1/risk/dead-man-switch/heartbeat') // fine
 * checkNoBody('{"timeout_seconds":5}', 'POST /api/v1/risk/dead-man-switch/heartbeat') // throws unknown_field
 */
export function checkNoBody(text: string, operation: string): void {
  if (text === '') return
  const value = parseJson(text)
  const takes = `${operation} takes no body: send none, an empty one or {}`
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`
    throw new DomainError('validation_failed', `${takes}, not ${got}`, { errors: [{ field: 'body', message: 'must be absent, empty or {}' }] })
  }
  const fields = Object.keys(value)
  if (fields.length) {
    throw new DomainError('unknown_field', `${takes}; unknown field${fields.length > 1 ? 's' : ''}: ${fields.slice(0, 20).join(', ')}`, {
      errors: fields.slice(0, 20).map((field) => ({ field, message: 'is not a known field' })),
    })
  }
}
