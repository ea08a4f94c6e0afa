// Dashboard accounts, one per identity: issuer + subject (an OpenID Connect provider's, or 'local' for the local admin).
import type { Selectable } from 'kysely'
import type { DbOrTx } from '../../platform/db/database.js'
import type { AccountsTable } from '../../platform/db/schema.js'

export interface Account {
  id: string
  issuer: string
  subject: string
  /** Where notifications go; set only from a verified address (or by the operator for the local admin). */
  email: string | null
  name: string | null
  createdAtMs: number
}

export const toAccount = (row: Selectable<AccountsTable>): Account => ({
  id: row.id,
  issuer: row.issuer,
  subject: row.subject,
  email: row.email,
  name: row.name,
  createdAtMs: row.created_at,
})

export const accountsRepository = {
  /**
   * The account of issuer + subject, created with `account.id` when new. An existing account takes the given
   * email and name; a null one keeps what it has (an unverified address never replaces a verified one).
   */
  async upsert(db: DbOrTx, account: Account): Promise<Account> {
    const row = await db
      .insertInto('accounts')
      .values({
        id: account.id,
        issuer: account.issuer,
        subject: account.subject,
        email: account.email,
        name: account.name,
        created_at: account.createdAtMs,
      })
      .onConflict((oc) =>
        oc.columns(['issuer', 'subject']).doUpdateSet((eb) => ({
          email: account.email ?? eb.ref('accounts.email'),
          name: account.name ?? eb.ref('accounts.name'),
        })),
      )
      .returningAll()
      .executeTakeFirstOrThrow()
    return toAccount(row)
  },

  async findById(db: DbOrTx, id: string): Promise<Account | undefined> {
    const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toAccount(row)
  },
}
