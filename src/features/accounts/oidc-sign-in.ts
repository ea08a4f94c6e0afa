// Dashboard sign-in with any OpenID Connect provider: the authorization code flow with PKCE, state and nonce,
// through openid-client. The provider's metadata is discovered on first use (not at start, so that the
// service starts while the provider is down) and kept; a failed discovery is tried again on the next sign-in.
import * as client from 'openid-client'
import type { Logger } from 'pino'
import { type Config, parseSecretBearingUrl } from '../../config.js'
import { type AppError, badGateway, badRequest, forbidden } from '../../platform/errors.js'
import type { VerifiedIdentity } from './service.js'

export type OidcSettings = NonNullable<Config['oidc']>

/** What the callback must see again: kept by the browser in a signed cookie between login and callback. */
export interface OidcFlow {
  state: string
  nonce: string
  codeVerifier: string
}

const SCOPE = 'openid email profile'
const DISCOVERY_TIMEOUT_SECONDS = 10
const MAX_EMAIL_CHARS = 320
const MAX_NAME_CHARS = 200

export class OidcSignIn {
  private configuration: Promise<client.Configuration> | undefined

  constructor(
    private readonly settings: OidcSettings,
    private readonly redirectUri: string,
    private readonly logger: Logger,
  ) {
    parseSecretBearingUrl('OIDC_ISSUER', settings.issuer, 'a local test provider')
  }

  newFlow(): OidcFlow {
    return { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() }
  }

  /** Where to send the browser to sign in. */
  async authorizationUrl(flow: OidcFlow): Promise<string> {
    const configuration = await this.discover()
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
    })
    return url.href
  }

  /**
   * Ends the flow: checks the callback against the flow (state, then the ID token's nonce, with the PKCE
   * verifier proving this client started it), redeems the code once, and returns who signed in.
   */
  async identify(callbackUrl: URL, flow: OidcFlow): Promise<VerifiedIdentity> {
    const configuration = await this.discover()
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
    try {
      tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      })
    } catch (error) {
      throw this.callbackError(error)
    }
    const idToken = tokens.claims()
    if (!idToken) throw badRequest('Sign-in failed: the provider returned no ID token')
    // Providers that follow OpenID Connect strictly put scope claims (email, name) only in the UserInfo response.
    const needsUserInfo = idToken.email === undefined || idToken.name === undefined
    const userInfo =
      needsUserInfo && configuration.serverMetadata().userinfo_endpoint
        ? await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub).catch((error: unknown) => {
            throw this.callbackError(error)
          })
        : undefined
    const emailSource = idToken.email !== undefined ? idToken : (userInfo ?? idToken)
    const identity = {
      issuer: idToken.iss,
      subject: idToken.sub,
      email: isVerified(emailSource.email_verified) ? boundedString(emailSource.email, MAX_EMAIL_CHARS) : undefined,
      name: boundedString(idToken.name ?? userInfo?.name, MAX_NAME_CHARS),
    }
    this.assertAllowed(identity)
    return identity
  }

  /**
   * With OIDC_ALLOWED_EMAIL_DOMAINS, only an identity whose verified address is at one of them (exactly: not a
   * subdomain) signs in; the others get no account. Without it, every account of the issuer may sign in.
   */
  private assertAllowed(identity: VerifiedIdentity): void {
    const allowed = this.settings.allowedEmailDomains
    if (allowed === undefined) return
    const domain = identity.email?.slice(identity.email.lastIndexOf('@') + 1).toLowerCase()
    if (domain !== undefined && allowed.includes(domain)) return
    this.logger.info({ issuer: identity.issuer, subject: identity.subject }, 'sign-in refused: no verified address at an allowed domain')
    throw forbidden(
      'This account may not sign in to this service: it signs in only with an email address, verified by the provider, at a domain the operator allows',
    )
  }

  private discover(): Promise<client.Configuration> {
    this.configuration ??= this.runDiscovery().catch((error: unknown) => {
      this.configuration = undefined
      throw error
    })
    return this.configuration
  }

  private async runDiscovery(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret, tokenAuthMethod } = this.settings
    const issuerUrl = new URL(issuer)
    const authentication =
      tokenAuthMethod === 'client_secret_post' ? client.ClientSecretPost(clientSecret) : client.ClientSecretBasic(clientSecret)
    // Plain http only for a provider on loopback (the constructor refuses any other http issuer): a test
    // provider or a local development one. Everything else must be https, as openid-client insists by default.
    const execute = issuerUrl.protocol === 'http:' ? [client.allowInsecureRequests] : []
    try {
      return await client.discovery(issuerUrl, clientId, clientSecret, authentication, { execute, timeout: DISCOVERY_TIMEOUT_SECONDS })
    } catch (error) {
      this.logger.warn({ err: error, issuer }, 'OpenID Connect discovery failed')
      throw badGateway(`Sign-in is unavailable: the sign-in provider at ${issuer} could not be reached; try again shortly`)
    }
  }

  /** Every refused callback is a 400 that says why; a provider that cannot be reached is a 502. */
  private callbackError(error: unknown): AppError {
    if (error instanceof client.AuthorizationResponseError) {
      return badRequest(
        `Sign-in failed: the provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`,
      )
    }
    if (error instanceof client.ResponseBodyError) {
      return badRequest(
        `Sign-in failed: the provider refused the authorization code (${error.error}); it may have been used already. Start again at /auth/login`,
      )
    }
    if (error instanceof client.ClientError) {
      // openid-client's own message is generic ("invalid response encountered"); its cause names the check that failed.
      const reason = error.cause instanceof Error ? error.cause.message : error.message
      return badRequest(`Sign-in failed: the provider's response did not check out (${reason})`)
    }
    this.logger.warn({ err: error }, 'OpenID Connect callback failed')
    return badGateway('Sign-in failed: the sign-in provider could not be reached; try again shortly')
  }
}

/** `email_verified` as the standard gives it (true), or as some providers send it (the string "true"); nothing else. */
function isVerified(claim: unknown): boolean {
  return claim === true || claim === 'true'
}

function boundedString(value: unknown, maxChars: number): string | undefined {
  if (typeof value !== 'string') return undefined
  const trimmed = value.trim()
  return trimmed.length > 0 && trimmed.length <= maxChars ? trimmed : undefined
}
