// Dashboard accounts: created or updated at sign-in from the identity provider's verified claims, and the
// local admin that owns projects made on the command line and signs in with one-time links.
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/crypto/ids.js'
import type { Db } from '../../platform/db/database.js'
import { type Account, accountsRepository } from './repository.js'

export const LOCAL_ISSUER = 'local'
export const LOCAL_ADMIN_SUBJECT = 'admin'
const LOCAL_ADMIN_NAME = 'Local admin'

/** Who signed in, as the identity provider vouches for it. */
export interface VerifiedIdentity {
  issuer: string
  subject: string
  /** Only an address the provider marked email_verified. */
  email: string | undefined
  name: string | undefined
}

export class AccountService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The account of this identity, created on first sign-in; a verified email and a name replace the stored ones. */
  async recordSignIn(identity: VerifiedIdentity): Promise<Account> {
    return accountsRepository.upsert(this.db, {
      id: newId('acct'),
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email ?? null,
      name: identity.name ?? null,
      createdAtMs: this.clock.now(),
    })
  }

  /** The local admin account, created on first use; `email` (given by the operator) becomes its address. */
  async ensureLocalAdmin(email?: string): Promise<Account> {
    return this.recordSignIn({ issuer: LOCAL_ISSUER, subject: LOCAL_ADMIN_SUBJECT, email, name: LOCAL_ADMIN_NAME })
  }
}
