// Dashboard sessions and the local admin's one-time sign-in tokens.
//
// Lifetime: a session ends after 7 days without use or 30 days after sign-in, whichever comes first
// (src/features/accounts/session-tokens.ts), and at once on logout. Every sign-in makes a new token (the cookie rotates)
// and revokes the session the browser presented, if any.
import type { Clock } from '../../platform/clock.js'
import type { Db } from '../../platform/db/database.js'
import { loginTokensRepository } from './login-tokens-repository.js'
import type { Account } from './repository.js'
import {
  hashSecretToken,
  isWellFormedSecretToken,
  LOGIN_TOKEN_TTL_MS,
  newSecretToken,
  sessionExpiryMs,
  sessionNeedsRenewal,
} from './session-tokens.js'
import { sessionsRepository } from './sessions-repository.js'

export interface ActiveSession {
  account: Account
}

export interface NewSession {
  /** Goes in the cookie; only its hash is stored. */
  token: string
  expiresAtMs: number
}

export class SessionService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Signs `accountId` in with a new session; the session of `replacedToken` (the browser's previous one) ends. */
  async start(accountId: string, replacedToken?: string): Promise<NewSession> {
    const nowMs = this.clock.now()
    const { token, hash } = newSecretToken()
    const expiresAtMs = sessionExpiryMs(nowMs, nowMs)
    await this.db.transaction().execute(async (tx) => {
      if (replacedToken && isWellFormedSecretToken(replacedToken))
        await sessionsRepository.revoke(tx, hashSecretToken(replacedToken), nowMs)
      await sessionsRepository.deleteEnded(tx, accountId, nowMs)
      await sessionsRepository.insert(tx, { idHash: hash, accountId, createdAtMs: nowMs, expiresAtMs })
    })
    return { token, expiresAtMs }
  }

  /** The session of a cookie's token, or undefined when it is missing, unknown, revoked or expired. Use extends it. */
  async authenticate(token: string | undefined): Promise<ActiveSession | undefined> {
    if (!token || !isWellFormedSecretToken(token)) return undefined
    const nowMs = this.clock.now()
    const hash = hashSecretToken(token)
    const session = await sessionsRepository.findActive(this.db, hash, nowMs)
    if (!session) return undefined
    if (sessionNeedsRenewal(session, nowMs)) await sessionsRepository.extend(this.db, hash, sessionExpiryMs(session.createdAtMs, nowMs))
    return { account: session.account }
  }

  /** Logout: the session stops working at once, in every instance. */
  async end(token: string | undefined): Promise<void> {
    if (!token || !isWellFormedSecretToken(token)) return
    await sessionsRepository.revoke(this.db, hashSecretToken(token), this.clock.now())
  }

  /** A one-time sign-in token for `accountId`, valid for 15 minutes. */
  async createLoginToken(accountId: string): Promise<NewSession> {
    const nowMs = this.clock.now()
    const { token, hash } = newSecretToken()
    const expiresAtMs = nowMs + LOGIN_TOKEN_TTL_MS
    await this.db.transaction().execute(async (tx) => {
      await loginTokensRepository.deleteEnded(tx, nowMs)
      await loginTokensRepository.insert(tx, { tokenHash: hash, accountId, createdAtMs: nowMs, expiresAtMs })
    })
    return { token, expiresAtMs }
  }

  /** Uses a sign-in token: its account the first time, undefined ever after (or once expired). */
  async redeemLoginToken(token: string): Promise<string | undefined> {
    if (!isWellFormedSecretToken(token)) return undefined
    return loginTokensRepository.consume(this.db, hashSecretToken(token), this.clock.now())
  }
}
