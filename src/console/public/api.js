// The console's one way to the API: the session's Bearer token from sessionStorage (gone with the
// tab, never in localStorage), and every answer that is not 2xx turned into an ApiError carrying
// the problem's `detail`, which the caller shows. A 401 on a signed-in request ends the session.
const TOKEN = 'bulwark.console.token'

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `the API answered ${status}`)
    this.status = status
    this.code = problem?.code
    this.problem = problem
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN),
  set: (value) => sessionStorage.setItem(TOKEN, value),
  forget: () => sessionStorage.removeItem(TOKEN),
}

/** Told when a signed-in request is answered 401: the token expired or the user is gone. */
let onSessionEnded = () => {}
export function whenSessionEnds(fn) {
  onSessionEnded = fn
}

/**
 * Calls /api/v1 + path (or a path that already starts /api/, as a Link header gives it); resolves with the parsed JSON body (and the Link header), throws ApiError.
 * @example const signals = (await api('GET', '/signals?limit=50')).body
 */
export async function api(method, path, body) {
  const headers = { accept: 'application/json' }
  const bearer = token.get()
  if (bearer) headers.authorization = `Bearer ${bearer}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res
  try {
    res = await fetch(path.startsWith('/api/') ? path : `/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  } catch (error) {
    throw new ApiError(0, { detail: `the server could not be reached (${error.message})` })
  }
  const text = await res.text()
  let parsed
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  if (!res.ok) {
    const error = new ApiError(res.status, parsed)
    if (res.status === 401 && bearer) {
      token.forget()
      onSessionEnded(error)
    }
    throw error
  }
  return { body: parsed, link: res.headers.get('link') }
}
