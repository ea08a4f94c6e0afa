// Table types for Kysely. Times are integer milliseconds since the Unix epoch (UTC) on both
// databases; JSON is stored as text so that one query code base serves SQLite and PostgreSQL.

import type { Generated } from 'kysely'

export interface AccountsTable {
  id: string
  issuer: string
  subject: string
  email: string | null
  name: string | null
  created_at: number
}

export interface SessionsTable {
  /** SHA-256 of the session token; the token itself lives only in the cookie. */
  id_hash: string
  account_id: string
  created_at: number
  expires_at: number
  revoked_at: number | null
}

export interface LoginTokensTable {
  token_hash: string
  account_id: string
  created_at: number
  expires_at: number
  used_at: number | null
}

export interface ProjectsTable {
  id: string
  account_id: string | null
  name: string
  plan: string
  created_at: number
  /** What the signing page names the project by; the name when null. */
  display_name: string | null
  /** The project's website as its owner set it (an http(s) origin); shown to end users once verified. */
  website_url: string | null
  /** The proof the website must publish (docs/pages.md); made when website_url is set. */
  website_token: string | null
  /** When the service last found the proof at website_url; null while unverified. */
  website_verified_at: number | null
}

export interface ProjectLogosTable {
  project_id: string
  /** image/png, image/jpeg or image/webp, as the bytes' signature says. */
  content_type: string
  /** The image, base64. */
  data: string
  /** SHA-256 of the image, hex: part of the logo's URL, so that a new logo is a new URL. */
  sha256: string
  updated_at: number
}

export interface ApiKeysTable {
  id: string
  project_id: string
  name: string
  prefix: string
  /** SHA-256 of the full key, hex. */
  key_hash: string
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
}

export interface PayloadsTable {
  uuid: string
  project_id: string
  type: string
  status: string
  /** The requested transaction, JSON (sign, signAndSubmit). */
  transaction_json: string | null
  message: string | null
  /** The text a connect payload's wallet signs. */
  challenge: string | null
  return_url: string | null
  custom_instructions: string | null
  expires_at: number
  created_at: number
  resolved_at: number | null
  signer_address: string | null
  tx_hash: string | null
  tx_blob: string | null
  wallet_adapter: string | null
  public_key: string | null
  signature: string | null
  /** signAndSubmit: the engine result of the submission, and the final outcome once validated. */
  submit_engine_result: string | null
  validated_result: string | null
  validated_ledger_index: number | null
  /** signAndSubmit: the hash of the transaction the validated ledger holds (tx_hash, or a copy signed otherwise). */
  validated_tx_hash: string | null
  /** options.signers: the accounts allowed to resolve the payload, JSON; null for anyone. */
  signers_json: string | null
  /** signAndSubmit: succeeded, failed or dropped, once final. */
  outcome: string | null
  /** signAndSubmit payments: the metadata's delivered_amount, JSON (drops as a string, or an issued-currency object). */
  delivered_amount: string | null
  /** options.multisign: the signer list and the signatures collected (MultisignState, JSON); null otherwise. */
  multisign_json: string | null
  /** options.externalId: the application's own id, unique per project. */
  external_id: string | null
  /** options.metadata, JSON. */
  metadata_json: string | null
  /**
   * 1 while a submission claim of the payload's is held (submission-claims-repository.ts): a signed transaction of its
   * may be on the ledger. On the payload's row, so that a move racing the claim waits for it and sees it.
   */
  submission_claimed: Generated<number>
}

export interface PayloadProofsTable {
  /** What was signed and by which key (see proof-key.ts): one payload per proof, ever. */
  proof_key: string
  payload_uuid: string
  created_at: number
}

export interface TransactionFollowsTable {
  /** The payload's uuid. */
  id: string
  tx_hash: string
  last_ledger_sequence: number | null
  /** A transaction without LastLedgerSequence is looked at often until this time, then once a minute. */
  follow_until: number
  /**
   * A transaction without LastLedgerSequence: the first ledger that can hold it, one past the last validated ledger
   * seen with its Sequence (or Ticket) unused; null until seen so.
   */
  earliest_ledger: number | null
  /** pending: waiting for its next check; sending: a follower holds its lease; done: the outcome is recorded (or, before migration 0015, following gave up). */
  state: string
  attempts: number
  next_attempt_at: number
  lease_expires_at: number | null
  created_at: number
  finished_at: number | null
}

export interface PayloadDailyCountsTable {
  project_id: string
  /** UTC day of the payload's creation, YYYY-MM-DD. */
  day: string
  status: string
  /** '' when the payload has no wallet adapter. */
  wallet_adapter: string
  /** Added to the other shards' counts of the same key; shards keep concurrent transactions off one row. */
  count: number
  shard: Generated<number>
}

export interface ProjectUsageTable {
  project_id: string
  /** UTC month, YYYY-MM. */
  month: string
  /** The month's quota granted to its usage shards so far (at most the plan's limit); payloads are counted in the shards. */
  payload_count: number
}

/**
 * A share of a project's monthly quota: `granted` taken from project_usage in blocks, `used` the payloads created
 * against it. The month's count of payloads is the sum of `used`. `month_granted` is project_usage.payload_count as of
 * the month's last grant, which rewrites it on every shard's row (usage-repository.ts); 0 on rows no grant has
 * rewritten since the column was added.
 */
export interface UsageShardsTable {
  project_id: string
  month: string
  shard: number
  granted: number
  used: number
  month_granted: number
}

export interface UsageWarningsTable {
  project_id: string
  month: string
  limit_value: number
  payload_count: number
  created_at: number
}

export interface WebhooksTable {
  id: string
  project_id: string
  url: string
  /** The signing secret, encrypted with a key derived from the server secret. */
  secret_ciphertext: string
  events_json: string
  created_at: number
  disabled_at: number | null
  disabled_reason: string | null
  deleted_at: number | null
  /** The secret a rotation replaced, still signing deliveries (beside the new one) until previous_secret_expires_at. */
  previous_secret_ciphertext: string | null
  previous_secret_expires_at: number | null
  /** The first failed attempt since the webhook's last successful one; null while deliveries succeed. */
  failing_since: number | null
}

export interface WebhookDeliveriesTable {
  id: string
  webhook_id: string
  project_id: string
  payload_uuid: string | null
  event: string
  /** The exact bytes sent, so that retries send (and sign) the same body. */
  body: string
  state: string
  attempts: number
  next_attempt_at: number
  lease_expires_at: number | null
  last_status_code: number | null
  last_error: string | null
  created_at: number
  completed_at: number | null
}

export interface EmailsTable {
  id: string
  /** Makes an email idempotent: the 80% warning once per project per month, one alert per delivery. */
  dedupe_key: string
  kind: string
  project_id: string | null
  to_address: string | null
  subject: string
  body_text: string
  state: string
  attempts: number
  next_attempt_at: number
  lease_expires_at: number | null
  last_error: string | null
  created_at: number
  sent_at: number | null
}

export interface SettingsTable {
  key: string
  value: string
}

/** A sign request created on the Xaman platform for a payload (the payload's uuid is the capability; Xaman's is not shown). */
export interface XamanSignRequestsTable {
  xaman_uuid: string
  payload_uuid: string
  created_at: number
  /** Set once its outcome was applied or it can no longer give one (cancelled, expired, did not verify). */
  settled_at: number | null
  /** When the Xaman worker next asks Xaman about it. */
  next_check_at: Generated<number>
  /** Held by the instance asking Xaman about it now. */
  lease_expires_at: number | null
}

/** The one signed transaction of a signAndSubmit payload being submitted now, so that two instances never submit two. */
export interface SubmissionClaimsTable {
  payload_uuid: string
  tx_hash: string
  lease_expires_at: number
  /** The intent: what resolves the payload as signed should its submitter die after the node accepted the blob. */
  tx_blob: string | null
  signer_address: string | null
  wallet_adapter: string | null
  proof_key: string | null
  /** The first submission's time: a later submission of the same blob leaves it. */
  submitted_at: number | null
  /** Submissions of the blob under this claim: more than one when a submission's claim was left behind and taken again. */
  attempts: Generated<number>
}

/** An Idempotency-Key of a project: claimed while its request runs, then the response that request gave. */
export interface IdempotencyKeysTable {
  project_id: string
  key: string
  /** SHA-256 of the route and the request body: a repeat must be the same request. */
  fingerprint: string
  /** Who holds the claim: a request completes or releases only its own. */
  claim_token: string
  /** While the request runs: when another may take the key over (its instance died). Null once completed. */
  lease_expires_at: number | null
  status_code: number | null
  /** The response body, sealed like webhook secrets (a webhook's creation response holds its secret). */
  response_sealed: string | null
  created_at: number
  expires_at: number
}

export interface Database {
  accounts: AccountsTable
  sessions: SessionsTable
  login_tokens: LoginTokensTable
  projects: ProjectsTable
  api_keys: ApiKeysTable
  payloads: PayloadsTable
  payload_proofs: PayloadProofsTable
  transaction_follows: TransactionFollowsTable
  payload_daily_counts: PayloadDailyCountsTable
  project_usage: ProjectUsageTable
  usage_shards: UsageShardsTable
  usage_warnings: UsageWarningsTable
  webhooks: WebhooksTable
  webhook_deliveries: WebhookDeliveriesTable
  emails: EmailsTable
  settings: SettingsTable
  xaman_sign_requests: XamanSignRequestsTable
  submission_claims: SubmissionClaimsTable
  project_logos: ProjectLogosTable
  idempotency_keys: IdempotencyKeysTable
}

/**
 * Every column of a table, named: what a hot query that reads or returns whole rows lists instead of `*`. A prepared
 * statement's result type is fixed when PostgreSQL first plans it; once a migration adds a column (another instance's,
 * in a rolling deploy, docs/deployment.md), a `*` that now means one column more fails on every later call with
 * "cached plan must not change result type". The type refuses a list that leaves a column out, and a test compares the
 * lists with the migrated tables. A column to be dropped leaves its interface and list a release before the migration
 * that drops it (docs/deployment.md).
 */
function everyColumn<Table>() {
  return <const Columns extends readonly (keyof Table & string)[]>(
    columns: Columns &
      ([Exclude<keyof Table, Columns[number]>] extends [never] ? unknown : { missing: Exclude<keyof Table, Columns[number]> }),
  ): Columns => columns
}

export const COLUMNS = {
  payloads: everyColumn<PayloadsTable>()([
    'uuid',
    'project_id',
    'type',
    'status',
    'transaction_json',
    'message',
    'challenge',
    'return_url',
    'custom_instructions',
    'expires_at',
    'created_at',
    'resolved_at',
    'signer_address',
    'tx_hash',
    'tx_blob',
    'wallet_adapter',
    'public_key',
    'signature',
    'submit_engine_result',
    'validated_result',
    'validated_ledger_index',
    'validated_tx_hash',
    'signers_json',
    'outcome',
    'delivered_amount',
    'multisign_json',
    'external_id',
    'metadata_json',
    'submission_claimed',
  ]),
  idempotency_keys: everyColumn<IdempotencyKeysTable>()([
    'project_id',
    'key',
    'fingerprint',
    'claim_token',
    'lease_expires_at',
    'status_code',
    'response_sealed',
    'created_at',
    'expires_at',
  ]),
  webhook_deliveries: everyColumn<WebhookDeliveriesTable>()([
    'id',
    'webhook_id',
    'project_id',
    'payload_uuid',
    'event',
    'body',
    'state',
    'attempts',
    'next_attempt_at',
    'lease_expires_at',
    'last_status_code',
    'last_error',
    'created_at',
    'completed_at',
  ]),
  emails: everyColumn<EmailsTable>()([
    'id',
    'dedupe_key',
    'kind',
    'project_id',
    'to_address',
    'subject',
    'body_text',
    'state',
    'attempts',
    'next_attempt_at',
    'lease_expires_at',
    'last_error',
    'created_at',
    'sent_at',
  ]),
  transaction_follows: everyColumn<TransactionFollowsTable>()([
    'id',
    'tx_hash',
    'last_ledger_sequence',
    'follow_until',
    'earliest_ledger',
    'state',
    'attempts',
    'next_attempt_at',
    'lease_expires_at',
    'created_at',
    'finished_at',
  ]),
}
