// The one place an error becomes an HTTP answer: RFC 9457 problem+json, never a stack trace.
import { DomainError } from '../shared/errors.ts'
import { log } from '../shared/log.ts'
import { ERROR_CODES } from './errors.ts'
import { DatabaseBusyError, isBusy } from '../store/sqlite/busy.ts'
import { DatabaseUnavailableError } from '../store/store.ts'

export interface Reply {
  status: number
  headers: Record<string, string>
  body: string | Buffer
}

export function problemReply(err: unknown, requestId: string): Reply {
  if (err instanceof DatabaseBusyError || isBusy(err)) {
    // Another process holds the write lock: nothing was written, and a retry will very likely work.
    const detail = err instanceof DatabaseBusyError ? err.message : 'the database is locked by another process; nothing was written: retry shortly'
    err = new DomainError('database_busy', detail, { headers: { 'Retry-After': '1' } })
  } else if (err instanceof DatabaseUnavailableError) {
    // PostgreSQL did not answer, or did not confirm a commit: the change may or may not be there;
    // a retry with the same Idempotency-Key settles it.
    err = new DomainError('database_unavailable', `${err.message}; retry shortly (with the same Idempotency-Key for a change)`, {
      headers: { 'Retry-After': '1' },
    })
  } else if (!(err instanceof DomainError)) {
    log({ level: 'error', request_id: requestId, msg: 'unhandled error', error: err instanceof Error ? err.stack : String(err) })
    err = new DomainError('internal', 'an internal error occurred; the request id identifies it in the server log')
  }
  const e = err as DomainError
  const [status, title] = ERROR_CODES[e.code]
  const body = {
    type: 'about:blank',
    title,
    status,
    detail: e.detail,
    code: e.code,
    request_id: requestId,
    ...(e.extra.errors ? { errors: e.extra.errors } : {}),
  }
  return {
    status,
    // A 401 always names the scheme (RFC 9110 11.6.1), whichever module refused the credential.
    headers: { 'Content-Type': 'application/problem+json', ...(status === 401 ? { 'WWW-Authenticate': 'Bearer realm="bulwark"' } : {}), ...e.extra.headers },
    body: JSON.stringify(body),
  }
}
