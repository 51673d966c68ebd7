// Which route answers a request: paths without parameters (most of the API) from a map, the rest
// through itty-router's patterns; 405 with Allow for a known path and another method, else 404.
import { IttyRouter } from 'itty-router'
import { DomainError } from '../shared/errors.ts'
import type { RoutedRequest } from './pipeline.ts'
import type { Reply } from './problem.ts'
import type { RouteSpec } from './route.ts'

/**
 * The dispatcher for these routes: finds the route and calls `run` with it, or throws 404/405.
 *
 * @example
 * const dispatch = createRouting(app.routes, createPipeline(options))
 * const reply = await dispatch(request)
 */
export function createRouting(
  routes: RouteSpec[],
  run: (spec: RouteSpec, request: RoutedRequest) => Promise<Reply>,
): (request: RoutedRequest) => Promise<Reply> {
  const router = IttyRouter()
  for (const spec of routes) {
    const register = (router as unknown as Record<string, (path: string, handler: (r: RoutedRequest) => Promise<Reply>) => void>)[spec.method.toLowerCase()]
    register(spec.path, (request) => run(spec, request))
  }

  // Paths without parameters (most of the API) are looked up directly, skipping itty-router's URL
  // parse and its scan of every pattern. Anything unusual (parameters, trailing or double slashes,
  // dot segments, escapes, a fragment) goes through the router as before.
  const table = router.routes as unknown as [string, RegExp][]
  // Only a pattern with parameters can match a path other than its own (an earlier plain twin would
  // be a duplicate route): the shadowing check looks at those alone, a few dozen, not every pair.
  const patterned = routes.flatMap((spec, i) => (/[:*]/.test(spec.path) ? [{ i, method: table[i][0], pattern: table[i][1] }] : []))
  // The first plain route of each method and path, the one the router would try first.
  const plain = new Map<string, { spec: RouteSpec; i: number }>()
  routes.forEach((spec, i) => {
    const key = `${spec.method} ${spec.path}`
    if (!/[:*]/.test(spec.path) && !plain.has(key)) plain.set(key, { spec, i })
  })
  // Checked at a route's first request, not at start: testing the patterns compiles each of their
  // regular expressions, which cost every start ~1 ms before its first answer.
  const exact = new Map<string, RouteSpec | null>()
  function exactSpec(key: string): RouteSpec | undefined {
    let spec = exact.get(key)
    if (spec === undefined) {
      const first = plain.get(key)
      if (!first) return undefined
      // Only where the router would pick this very route: no earlier pattern matches the path too.
      const { spec: candidate, i } = first
      const shadowed = patterned.some((p) => p.i < i && p.method === candidate.method && p.pattern.test(candidate.path))
      spec = shadowed ? null : candidate
      exact.set(key, spec)
    }
    return spec ?? undefined
  }
  const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/

  function exactRoute(request: RoutedRequest): RouteSpec | undefined {
    const target = request.node.url ?? ''
    const mark = target.indexOf('?')
    const path = mark < 0 ? target : target.slice(0, mark)
    const spec = exactSpec(`${request.method} ${path}`)
    if (!spec || !PLAIN_PATH.test(path) || target.includes('#')) return undefined
    const query: Record<string, string | string[]> = { __proto__: null } as never
    if (mark >= 0) {
      // The same reading as itty-router's, so both paths see the same query.
      for (const [name, value] of new URLSearchParams(target.slice(mark + 1))) query[name] = query[name] ? ([] as string[]).concat(query[name], value) : value
    }
    request.route = spec.path
    request.params = {}
    request.query = query
    return spec
  }

  function allowedMethods(pathname: string): string[] {
    const methods = new Set<string>()
    for (const [method, pattern] of router.routes as unknown as [string, RegExp][]) if (pattern.test(pathname)) methods.add(method)
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods]
  }

  async function dispatch(request: RoutedRequest): Promise<Reply> {
    const req = request.node
    if (req.httpVersion === '1.1' && req.headers.host === undefined)
      throw new DomainError('validation_failed', 'an HTTP/1.1 request needs a Host header', { errors: [{ field: 'Host', message: 'is required' }] })
    if (!request.url.startsWith('http://localhost/')) throw new DomainError('not_found', 'request target must be an absolute path')
    const url = request.url
    const spec = exactRoute(request)
    if (spec) return run(spec, request)
    let reply: Reply | undefined
    try {
      reply = (await router.fetch(request as never)) as Reply | undefined
    } catch (err) {
      if (err instanceof TypeError && /URL/i.test(err.message)) throw new DomainError('not_found', 'request target is not a valid URL path')
      throw err
    }
    if (reply) return reply
    const pathname = new URL(url).pathname
    const allowed = allowedMethods(pathname)
    if (allowed.length)
      throw new DomainError('method_not_allowed', `${req.method} is not allowed on ${pathname}; allowed: ${allowed.join(', ')}`, {
        headers: { Allow: allowed.join(', ') },
      })
    throw new DomainError('not_found', `no route for ${req.method} ${pathname.slice(0, 200)}`)
  }

  return dispatch
}
