// Cursor pagination, newest first: ids are time-sortable, so a page is "id < cursor ORDER BY id DESC".
import type { Schema } from './schema.ts'
import type { Ctx, QueryOf } from './route.ts'
import { validationError } from '../shared/errors.ts'

export const pageQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'page size (default 100)' },
  cursor: { type: 'string', maxLength: 200, description: 'opaque cursor from a Link rel="next" header' },
} as const satisfies Record<string, Schema>

const ABOVE_EVERY_ID = '~'

interface PageStart {
  before: string
  limit: number
}

type PageQuery = QueryOf<typeof pageQuery>

function pageStart(query: PageQuery): PageStart {
  let before = ABOVE_EVERY_ID
  if (query.cursor !== undefined) {
    before = Buffer.from(query.cursor, 'base64url').toString('utf8')
    if (!/^[a-z]{2,3}_[0-9A-Z]{26}$/.test(before)) throw validationError('cursor', 'is not a cursor this server issued')
  }
  return { before, limit: query.limit ?? 100 }
}

/**
 * One page of a list endpoint: `fetch(before, limit)` returns up to `limit` rows with id < before,
 * newest first. One row more than the page is asked for, so Link rel="next" appears only when
 * another page really exists.
 */
export async function listPage<T extends { id: string }>(ctx: Ctx<PageQuery>, fetch: (before: string, limit: number) => Promise<T[]>): Promise<T[]> {
  const start = pageStart(ctx.query)
  return page(await fetch(start.before, start.limit + 1), start, ctx)
}

function page<T extends { id: string }>(rows: T[], start: PageStart, ctx: Ctx): T[] {
  if (rows.length <= start.limit) return rows
  const shown = rows.slice(0, start.limit)
  const next = new URLSearchParams(ctx.url.searchParams)
  next.set('cursor', Buffer.from(shown[shown.length - 1].id).toString('base64url'))
  next.set('limit', String(start.limit))
  ctx.headers.Link = `<${ctx.url.pathname}?${next}>; rel="next"`
  return shown
}
