// The one set of migrations, for SQLite and PostgreSQL alike. Run at start and by `countersign migrate`.
// Add new migrations at the end with the next number; never edit one that has shipped.
import { type Kysely, sql } from 'kysely'
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration'
import type { Dialect, Storage } from './database.js'

/** A migration is told which database it runs on, for the few changes SQLite makes differently. */
interface StorageMigration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>
}

const migrations: Record<string, StorageMigration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('name', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('accounts_issuer_subject', ['issuer', 'subject'])
        .execute()

      await db.schema
        .createTable('sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute()

      await db.schema
        .createTable('login_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute()

      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('projects_account').on('projects').columns(['account_id', 'created_at']).execute()

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute()
      await db.schema.createIndex('api_keys_project').on('api_keys').columns(['project_id', 'created_at']).execute()

      await db.schema
        .createTable('payloads')
        .addColumn('uuid', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('transaction_json', 'text')
        .addColumn('message', 'text')
        .addColumn('challenge', 'text')
        .addColumn('return_url', 'text')
        .addColumn('custom_instructions', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('resolved_at', 'bigint')
        .addColumn('signer_address', 'text')
        .addColumn('tx_hash', 'text')
        .addColumn('tx_blob', 'text')
        .addColumn('wallet_adapter', 'text')
        .addColumn('public_key', 'text')
        .addColumn('signature', 'text')
        .addColumn('submit_engine_result', 'text')
        .addColumn('validated_result', 'text')
        .addColumn('validated_ledger_index', 'bigint')
        .execute()
      await db.schema.createIndex('payloads_project_created').on('payloads').columns(['project_id', 'created_at', 'uuid']).execute()
      await db.schema
        .createIndex('payloads_pending_expiry')
        .on('payloads')
        .column('expires_at')
        .where(sql.ref('status'), '=', 'pending')
        .execute()

      await db.schema
        .createTable('payload_daily_counts')
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('wallet_adapter', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('payload_daily_counts_pk', ['project_id', 'day', 'status', 'wallet_adapter'])
        .execute()

      await db.schema
        .createTable('project_usage')
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('payload_count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('project_usage_pk', ['project_id', 'month'])
        .execute()

      await db.schema
        .createTable('usage_warnings')
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('limit_value', 'bigint', (c) => c.notNull())
        .addColumn('payload_count', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_warnings_pk', ['project_id', 'month'])
        .execute()

      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
        .addColumn('events_json', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('disabled_at', 'bigint')
        .addColumn('disabled_reason', 'text')
        .addColumn('deleted_at', 'bigint')
        .execute()
      await db.schema.createIndex('webhooks_project').on('webhooks').columns(['project_id', 'created_at']).execute()

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('payload_uuid', 'text')
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute()
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute()
      await db.schema.createIndex('webhook_deliveries_webhook').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute()
      await db.schema.createIndex('webhook_deliveries_payload').on('webhook_deliveries').column('payload_uuid').execute()

      await db.schema
        .createTable('emails')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.references('projects.id'))
        .addColumn('to_address', 'text')
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('body_text', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('sent_at', 'bigint')
        .execute()
      await db.schema.createIndex('emails_due').on('emails').columns(['state', 'next_attempt_at']).execute()

      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute()
    },
  },
  '0002_signing': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('xaman_sign_requests')
        .addColumn('xaman_uuid', 'text', (c) => c.primaryKey())
        .addColumn('payload_uuid', 'text', (c) => c.notNull().references('payloads.uuid'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('settled_at', 'bigint')
        .execute()
      await db.schema.createIndex('xaman_sign_requests_payload').on('xaman_sign_requests').columns(['payload_uuid', 'created_at']).execute()

      await db.schema
        .createTable('submission_claims')
        .addColumn('payload_uuid', 'text', (c) => c.primaryKey().references('payloads.uuid'))
        .addColumn('tx_hash', 'text', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint', (c) => c.notNull())
        .execute()
    },
  },
  '0003_proofs': {
    async up(db: Kysely<unknown>) {
      // The accounts allowed to resolve a payload (options.signers), JSON; the final outcome of a signAndSubmit
      // transaction, and the amount a payment delivered (JSON), from the validated ledger.
      await db.schema.alterTable('payloads').addColumn('signers_json', 'text').execute()
      await db.schema.alterTable('payloads').addColumn('outcome', 'text').execute()
      await db.schema.alterTable('payloads').addColumn('delivered_amount', 'text').execute()

      // Every signature or signed transaction that resolved a payload: the primary key makes a second use fail, on
      // every instance at once.
      await db.schema
        .createTable('payload_proofs')
        .addColumn('proof_key', 'text', (c) => c.primaryKey())
        .addColumn('payload_uuid', 'text', (c) => c.notNull().references('payloads.uuid'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute()

      // Submitted transactions followed to their final outcome: leased like the outbox tables, so that one instance
      // follows each transaction and another takes over when it dies. `id` is the payload's uuid.
      await db.schema
        .createTable('transaction_follows')
        .addColumn('id', 'text', (c) => c.primaryKey().references('payloads.uuid'))
        .addColumn('tx_hash', 'text', (c) => c.notNull())
        .addColumn('last_ledger_sequence', 'bigint')
        .addColumn('follow_until', 'bigint', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .execute()
      await db.schema.createIndex('transaction_follows_due').on('transaction_follows').columns(['state', 'next_attempt_at']).execute()

      // Xaman outcomes are learned by a background worker: when each request is next due for a look, and the lease of
      // the instance looking at it.
      await db.schema
        .alterTable('xaman_sign_requests')
        .addColumn('next_check_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute()
      await db.schema.alterTable('xaman_sign_requests').addColumn('lease_expires_at', 'bigint').execute()
      await db.schema.createIndex('xaman_sign_requests_due').on('xaman_sign_requests').columns(['settled_at', 'next_check_at']).execute()
    },
  },
  '0005_integrator': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('payloads').addColumn('external_id', 'text').execute()
      await db.schema.alterTable('payloads').addColumn('metadata_json', 'text').execute()
      // NULLs are distinct in a unique index on both databases: payloads without an externalId never collide.
      await db.schema.createIndex('payloads_project_external_id').on('payloads').columns(['project_id', 'external_id']).unique().execute()

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('claim_token', 'text', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('status_code', 'integer')
        .addColumn('response_sealed', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['project_id', 'key'])
        .execute()
      await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute()
    },
  },
  '0006_webhooks': {
    async up(db: Kysely<unknown>) {
      // Secret rotation keeps the replaced secret for a while, and auto-disabling needs when the failures began.
      await db.schema.alterTable('webhooks').addColumn('previous_secret_ciphertext', 'text').execute()
      await db.schema.alterTable('webhooks').addColumn('previous_secret_expires_at', 'bigint').execute()
      await db.schema.alterTable('webhooks').addColumn('failing_since', 'bigint').execute()
    },
  },
  // Counters out of hot rows (docs/performance.md): the month's quota is granted in blocks to counter shards, whose
  // `used` counts the payloads; the daily counts gain a shard to their key. project_usage.payload_count becomes the
  // quota granted to the shards so far. Existing counts move to shard 0, fully used.
  '0007_perf': {
    async up(db: Kysely<unknown>, dialect: Dialect) {
      await db.schema
        .createTable('usage_shards')
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('granted', 'bigint', (c) => c.notNull())
        .addColumn('used', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_shards_pk', ['project_id', 'month', 'shard'])
        .execute()
      await sql`insert into usage_shards (project_id, month, shard, granted, used)
        select project_id, month, 0, payload_count, payload_count from project_usage`.execute(db)

      if (dialect === 'sqlite') {
        // SQLite cannot change a primary key: the table is built anew under its name.
        await db.schema
          .createTable('payload_daily_counts_sharded')
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('wallet_adapter', 'text', (c) => c.notNull())
          .addColumn('count', 'bigint', (c) => c.notNull())
          .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
          .addPrimaryKeyConstraint('payload_daily_counts_pk', ['project_id', 'day', 'status', 'wallet_adapter', 'shard'])
          .execute()
        await sql`insert into payload_daily_counts_sharded (project_id, day, status, wallet_adapter, count, shard)
          select project_id, day, status, wallet_adapter, count, 0 from payload_daily_counts`.execute(db)
        await db.schema.dropTable('payload_daily_counts').execute()
        await db.schema.alterTable('payload_daily_counts_sharded').renameTo('payload_daily_counts').execute()
      } else {
        await db.schema
          .alterTable('payload_daily_counts')
          .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
          .execute()
        await db.schema.alterTable('payload_daily_counts').dropConstraint('payload_daily_counts_pk').execute()
        await db.schema
          .alterTable('payload_daily_counts')
          .addPrimaryKeyConstraint('payload_daily_counts_pk', ['project_id', 'day', 'status', 'wallet_adapter', 'shard'])
          .execute()
      }
    },
  },
  '0008_pages': {
    async up(db: Kysely<unknown>) {
      // What the signing page shows of a project: its display name, its website (shown once verified) and a logo.
      await db.schema.alterTable('projects').addColumn('display_name', 'text').execute()
      await db.schema.alterTable('projects').addColumn('website_url', 'text').execute()
      await db.schema.alterTable('projects').addColumn('website_token', 'text').execute()
      await db.schema.alterTable('projects').addColumn('website_verified_at', 'bigint').execute()
      await db.schema
        .createTable('project_logos')
        .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id'))
        .addColumn('content_type', 'text', (c) => c.notNull())
        // Base64 text: the same column type on both databases; logos are small (MAX_LOGO_BYTES).
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
    },
  },
  '0009_multisign': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('payloads').addColumn('multisign_json', 'text').execute()
    },
  },
  '0011_submission_intents': {
    async up(db: Kysely<unknown>) {
      // A submission claim becomes an intent: what resolves its payload as signed if the instance submitting it dies
      // after the node accepted the blob. Null on claims taken before this migration.
      for (const column of ['tx_blob', 'signer_address', 'wallet_adapter', 'proof_key']) {
        await db.schema.alterTable('submission_claims').addColumn(column, 'text').execute()
      }
      await db.schema.alterTable('submission_claims').addColumn('submitted_at', 'bigint').execute()
    },
  },
  '0012_usage_month_granted': {
    async up(db: Kysely<unknown>) {
      // The month's grants on each shard's row, as of the month's last grant (usage-repository.ts). Nothing to fill in:
      // a count reads the month's row too and takes the greater, so a row's 0 stands for "no grant since".
      await db.schema
        .alterTable('usage_shards')
        .addColumn('month_granted', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute()
    },
  },
  '0013_submission_attempts': {
    async up(db: Kysely<unknown>) {
      // How many submissions of its blob a claim has taken (submission-claims-repository.ts): a claim taken over one
      // left behind says so in the same statement. A claim taken before counts as one.
      await db.schema
        .alterTable('submission_claims')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
        .execute()
    },
  },
  '0014_payload_submission_claimed': {
    async up(db: Kysely<unknown>) {
      // A held submission claim, also on its payload's row (submission-claims-repository.ts): a move out of pending that
      // races the claim then waits for the row, and sees it, on PostgreSQL as on SQLite.
      await db.schema
        .alterTable('payloads')
        .addColumn('submission_claimed', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()
      await sql`update payloads set submission_claimed = 1 where uuid in (select payload_uuid from submission_claims)`.execute(db)
    },
  },
  '0015_follow_without_last_ledger': {
    async up(db: Kysely<unknown>) {
      // A transaction without LastLedgerSequence is followed until the ledger decides (transaction-follower.ts): the
      // first ledger that can still hold it, learned as it is followed. Follows that gave such a transaction up after
      // an hour, before this migration, take up again where their payload has no outcome, for an hour from now (an
      // instance of the version before, in a rolling deploy, gives them up again only then).
      await db.schema.alterTable('transaction_follows').addColumn('earliest_ledger', 'bigint').execute()
      await sql`update transaction_follows set state = 'pending', finished_at = null, follow_until = ${Date.now() + 60 * 60_000}
        where state = 'done' and last_ledger_sequence is null
          and id in (select uuid from payloads where outcome is null)`.execute(db)
    },
  },
  '0016_validated_tx_hash': {
    async up(db: Kysely<unknown>) {
      // The hash of the transaction the validated ledger holds (transaction-follower.ts): the payload's own, or that of
      // the same transaction signed otherwise. Every outcome recorded before was the payload's own transaction's.
      await db.schema.alterTable('payloads').addColumn('validated_tx_hash', 'text').execute()
      await sql`update payloads set validated_tx_hash = tx_hash where outcome in ('succeeded', 'failed')`.execute(db)
    },
  },
  '0017_payloads_signer_search': {
    async up(db: Kysely<unknown>, dialect: Dialect) {
      // The dashboard's search by signer (repository.ts, listForProject): without it, a scan of the whole table (460 ms
      // over a million payloads on PostgreSQL). Only signed payloads have a signer, so a creation adds no entry. A
      // large deployment may have built it ahead, concurrently (docs/deployment.md). A concurrent build that failed or
      // was cancelled leaves an invalid index of this name, which no query uses and "if not exists" would take for
      // made: it is dropped and built again. A build still under way holds this lock until it ends, valid or not.
      if (dialect === 'postgres') {
        await sql`lock table payloads in share update exclusive mode`.execute(db)
        const invalid = await sql`select 1 from pg_index i join pg_class c on c.oid = i.indexrelid
          where c.relname = 'payloads_project_signer' and c.relnamespace = current_schema()::regnamespace
            and not i.indisvalid`.execute(db)
        if (invalid.rows.length > 0) await sql`drop index payloads_project_signer`.execute(db)
      }
      await db.schema
        .createIndex('payloads_project_signer')
        .ifNotExists()
        .on('payloads')
        .columns(['project_id', 'signer_address', 'created_at', 'uuid'])
        .where(sql.ref('signer_address'), 'is not', null)
        .execute()
    },
  },
}

class InCodeMigrationProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(
      Object.entries(migrations).map(([name, migration]) => [name, { up: (db: Kysely<unknown>) => migration.up(db, this.dialect) }]),
    )
  }
}

export async function migrateToLatest(storage: Pick<Storage, 'db' | 'dialect'>): Promise<string[]> {
  return migrate(storage, (migrator) => migrator.migrateToLatest())
}

/** Migrates an empty or older database up to `name` and no further: for tests of what a migration does to data. */
export async function migrateUpTo(storage: Pick<Storage, 'db' | 'dialect'>, name: string): Promise<string[]> {
  return migrate(storage, (migrator) => migrator.migrateTo(name))
}

/** A database this build cannot run on, said so that the operator knows which release to run. */
export class MigrationError extends Error {
  override name = 'MigrationError'
}

/** How often a migration that lost a race with another process on SQLite is tried again (which then finds it done). */
const SQLITE_RACE_ATTEMPTS = 20

async function migrate(
  storage: Pick<Storage, 'db' | 'dialect'>,
  run: (migrator: Migrator) => ReturnType<Migrator['migrateToLatest']>,
): Promise<string[]> {
  if (await isAheadOfThisBuild(storage)) return []
  const migrator = new Migrator({ db: storage.db, provider: new InCodeMigrationProvider(storage.dialect) })
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await run(migrator)
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
    // SQLite has no migration lock: processes migrating one file at once (instances starting together, `countersign
    // migrate` beside them) apply the same statements, and the later one fails on what the earlier one made. Tried
    // again, it reads the migrations done meanwhile and goes on from there; a migration that fails by itself fails the
    // same way every time.
    if (storage.dialect !== 'sqlite' || attempt === SQLITE_RACE_ATTEMPTS) throw error instanceof Error ? error : new Error(String(error))
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * Whether the database holds migrations a newer release made, beside all of this build's: it then runs on it as it is,
 * since every migration is additive (docs/deployment.md), so that an older instance restarting during a rolling deploy,
 * or a rollback, still starts. A database newer than this build yet missing some of its migrations is not one it
 * can run on: refused, naming both.
 */
async function isAheadOfThisBuild(storage: Pick<Storage, 'db' | 'dialect'>): Promise<boolean> {
  const executed = await executedMigrations(storage)
  const newer = executed.filter((name) => !Object.hasOwn(migrations, name))
  if (newer.length === 0) return false
  const missing = Object.keys(migrations).filter((name) => !executed.includes(name))
  if (missing.length === 0) return true
  throw new MigrationError(
    `The database was migrated by another release (${newer.join(', ')}) and lacks migrations of this one (${missing.join(', ')}): run the release that migrated it, or a newer one`,
  )
}

/** The migrations the database holds that this build does not know: a newer release's. */
export async function newerMigrations(storage: Pick<Storage, 'db' | 'dialect'>): Promise<string[]> {
  return (await executedMigrations(storage)).filter((name) => !Object.hasOwn(migrations, name))
}

async function executedMigrations(storage: Pick<Storage, 'db' | 'dialect'>): Promise<string[]> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(storage.db)
    return rows.rows.map((row) => row.name)
  } catch {
    return [] // a fresh database: no migration table yet
  }
}
