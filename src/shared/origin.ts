// An exchange's API moved to another server (--venue-url, or a caller of openExchange): only the
// scheme, host and port may change. A path, a query or credentials in the URL would silently
// change every API call, so they are refused, in one place for the flag and the library alike.

/**
 * The origin of `raw`, or why it is not one.
 *
 * @example
 * parseOrigin('https://127.0.0.1:9443') // { ok: true, origin: 'https://127.0.0.1:9443' }
 * parseOrigin('https://127.0.0.1:9443/api') // { ok: false, reason: 'takes a scheme, a host and a port only, ...' }
 */
export function parseOrigin(raw: string): { ok: true; origin: string } | { ok: false; reason: string } {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: `${JSON.stringify(raw)} is not a URL` }
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'must be https:// (or http://)' }
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    return { ok: false, reason: 'takes a scheme, a host and a port only, e.g. https://127.0.0.1:9443 (the exchange keeps its own paths)' }
  }
  return { ok: true, origin: url.origin }
}
