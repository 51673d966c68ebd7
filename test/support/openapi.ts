// The served OpenAPI document as a test oracle: its operations, a matcher from a concrete path back
// to its template, and ajv (JSON Schema 2020-12) validation of real answers against it.
import Ajv2020Module from 'ajv/dist/2020.js'
import * as assert from 'uvu/assert'
import type { Res, request } from './harness.ts'

// ajv is CommonJS with a `default` alias; under NodeNext the type of the default import is the module.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

export interface Operation {
  method: string // upper case
  path: string // template, /api/v1/webhooks/{id}
  op: any
  params: string[] // path parameter names
  matcher: RegExp
}

export function operations(doc: any): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) {
      if (!item[method]) continue
      const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      const matcher = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+')}$`)
      out.push({ method: method.toUpperCase(), path, op: item[method], params, matcher })
    }
  }
  return out
}

/** The template with every path parameter replaced. */
export function fill(template: string, value: string): string {
  return template.replace(/\{\w+\}/g, value)
}

/** The router's own "nothing here" answers, as opposed to a handler's 404 for an unknown id. */
export function isNoRoute(res: Res): boolean {
  if (res.status === 405 && res.json?.code === 'method_not_allowed') return true
  return res.status === 404 && res.json?.code === 'not_found' && /^no route for/.test(String(res.json.detail))
}

const DATE = /^\d{4}-\d{2}-\d{2}$/
function isRealDate(text: string): boolean {
  const d = new Date(`${text.slice(0, 10)}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text.slice(0, 10)
}

/**
 * Validates answers against the document, strictly: a status the operation does not document fails,
 * as does a missing header the document marks required. The formats are checked here, without
 * ajv-formats.
 */
export class ResponseOracle {
  private ajv: InstanceType<typeof Ajv2020>
  private cache = new Map<string, ReturnType<InstanceType<typeof Ajv2020>['compile']>>()
  readonly ops: Operation[]
  /** "METHOD template" -> the statuses answered so far that matched the document. */
  readonly seen = new Map<string, Set<number>>()

  constructor(readonly doc: any) {
    this.ops = operations(doc)
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true })
    // SPEC 2: response timestamps are ISO 8601 UTC with Z.
    this.ajv.addFormat(
      'date-time',
      (s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(s) && isRealDate(s) && !Number.isNaN(Date.parse(s)),
    )
    this.ajv.addFormat('date', (s: string) => DATE.test(s) && isRealDate(s))
    this.ajv.addFormat('email', (s: string) => /^[^\s@]+@[^\s@]+$/.test(s))
    this.ajv.addFormat('uri', (s: string) => {
      try {
        new URL(s)
        return true
      } catch {
        return false
      }
    })
    this.ajv.addSchema({ $id: 'urn:bulwark:components', $defs: doc.components?.schemas ?? {} })
  }

  /** The documented operation a concrete request lands on (templates without parameters win). */
  find(method: string, path: string): Operation | undefined {
    const pathname = path.split('?')[0]
    const candidates = this.ops.filter((o) => o.method === method && o.matcher.test(pathname))
    return candidates.sort((a, b) => a.params.length - b.params.length)[0]
  }

  private validator(schema: unknown) {
    const key = JSON.stringify(schema)
    let v = this.cache.get(key)
    if (!v) {
      const rewritten = JSON.parse(key.replaceAll('"#/components/schemas/', '"urn:bulwark:components#/$defs/'))
      v = this.ajv.compile(rewritten)
      this.cache.set(key, v)
    }
    return v
  }

  /** Problems found in one answer: status and media type documented, body valid. Empty when fine. */
  check(method: string, path: string, res: Res): string[] {
    const where = `${method} ${path.slice(0, 120)} -> ${res.status}`
    const found = this.find(method, path)
    if (!found) return [`${where}: no documented operation`]
    const declared = Object.hasOwn(found.op.responses, String(res.status)) ? found.op.responses[String(res.status)] : undefined
    if (!declared)
      return [`${where}: status not documented for ${found.method} ${found.path} (${Object.keys(found.op.responses).join(', ')}): ${res.text.slice(0, 200)}`]
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim()
    const media = declared.content ?? {}
    if (!Object.hasOwn(media, type)) return [`${where}: content-type ${type} not documented (${Object.keys(media).join(', ')})`]
    const missing = Object.entries<any>(declared.headers ?? {})
      .filter(([name, h]) => h.required && !res.headers.has(name))
      .map(([name]) => name)
    if (missing.length) return [`${where}: required header ${missing.join(', ')} missing`]
    const schema = media[type].schema
    if (schema) {
      if (res.json === undefined) return [`${where}: body is not JSON: ${res.text.slice(0, 200)}`]
      const validate = this.validator(schema)
      if (!validate(res.json)) return [`${where}: ${this.ajv.errorsText(validate.errors, { separator: '; ' })} in ${res.text.slice(0, 300)}`]
    }
    const key = `${found.method} ${found.path}`
    if (!this.seen.has(key)) this.seen.set(key, new Set())
    this.seen.get(key)!.add(res.status)
    return []
  }

  /** A client whose every answer must match the document (the test fails on the first that does not). */
  checked(api: (method: string, path: string, options?: Parameters<typeof request>[3]) => Promise<Res>) {
    return async (method: string, path: string, options: Parameters<typeof request>[3] = {}): Promise<Res> => {
      const res = await api(method, path, options)
      const problems = this.check(method, path, res)
      assert.equal(problems, [], problems.join('\n'))
      return res
    }
  }
}
