// Access tokens of an external OpenID Connect provider (SPEC section 3, optional):
// `serve --oidc-issuer URL --oidc-audience AUD`. The issuer's discovery document names its JWKS;
// jose fetches those keys on first use, caches them, and refetches when a token names a key it has
// not seen (key rotation), at most every 30 s. Only RS256 and ES256 are accepted, the issuer,
// audience and expiry are checked, and the caller is the local user with the token's `email`.
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose'

export const OIDC_ALGORITHMS = ['RS256', 'ES256']
const FETCH_TIMEOUT_MS = 5000
const DISCOVERY_RETRY_MS = 5000

interface OidcConfig {
  readonly issuer: string
  readonly audience: string
}

/** The issuer could not be reached or answered nonsense: the token can be neither accepted nor refused. */
export class OidcUnavailable extends Error {}

async function discover(issuer: string): Promise<JWTVerifyGetKey> {
  const where = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  let document: { issuer?: unknown; jwks_uri?: unknown }
  try {
    const res = await fetch(where, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } })
    if (!res.ok) throw new Error(`answered ${res.status}`)
    document = (await res.json()) as typeof document
  } catch (error) {
    throw new OidcUnavailable(`OIDC discovery at ${where} failed: ${error instanceof Error ? error.message : String(error)}`)
  }
  // OpenID Connect Discovery 1.0 section 4.3: the document must name the issuer it was fetched for.
  if (document.issuer !== issuer) throw new OidcUnavailable(`OIDC discovery at ${where} names issuer ${JSON.stringify(document.issuer)}`)
  let jwks: URL
  try {
    jwks = new URL(String(document.jwks_uri))
  } catch {
    throw new OidcUnavailable(`OIDC discovery at ${where} has no valid jwks_uri`)
  }
  if (jwks.protocol !== 'https:') throw new OidcUnavailable("the issuer's jwks_uri is not https")
  return createRemoteJWKSet(jwks, { timeoutDuration: FETCH_TIMEOUT_MS, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 })
}

/** Checks access tokens of one external issuer. */
export interface OidcVerifier {
  /**
   * The verified e-mail of an external access token, or undefined for a token that is not valid.
   * Throws OidcUnavailable when the issuer's keys cannot be had.
   */
  verify(token: string): Promise<string | undefined>
}

/**
 * The verifier for the Config's issuer and audience (--oidc-issuer, --oidc-audience); its keys are
 * fetched at the first token, not at start.
 *
 * @example
 * const oidc = createOidcVerifier({ issuer: 'https://login.example.com/realms/desk', audience: 'bulwark' })
 * const email = await oidc.verify(accessToken)
 */
export function createOidcVerifier(config: OidcConfig): OidcVerifier {
  let keySet: Promise<JWTVerifyGetKey> | undefined
  const keys = (): Promise<JWTVerifyGetKey> => {
    // A failed discovery is kept for a few seconds, so a burst of tokens does not hammer a provider
    // that is down; after that the next token tries again.
    keySet ??= discover(config.issuer).catch((error) => {
      setTimeout(() => {
        keySet = undefined
      }, DISCOVERY_RETRY_MS).unref()
      throw error
    })
    return keySet
  }
  return { verify: (token) => verifyWith(config, keys, token) }
}

async function verifyWith(config: OidcConfig, keys: () => Promise<JWTVerifyGetKey>, token: string): Promise<string | undefined> {
  const getKey = await keys()
  try {
    const { payload } = await jwtVerify(token, getKey, {
      issuer: config.issuer,
      audience: config.audience,
      algorithms: OIDC_ALGORITHMS,
      requiredClaims: ['sub', 'exp', 'email'],
    })
    if (typeof payload.email !== 'string' || payload.email_verified === false) return undefined
    return payload.email
  } catch (error) {
    if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError)) {
      throw new OidcUnavailable(`the OIDC issuer's keys could not be fetched: ${error instanceof Error ? error.message : String(error)}`)
    }
    return undefined
  }
}
