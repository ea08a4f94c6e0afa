// Floors for `npm run bench`: the least an authenticated, logged read or creation of a payload can cost on this
// machine. Fastify, one pino line per request to a file, the API key's SHA-256 looked up in a map, and then
// GET: one prepared SQLite point read of a payload row (WAL, the service's schema) and the JSON answer, over as many
// payloads as the service's GET run reads (FLOOR_PAYLOADS, round-robin: the rows and pages read are the service's);
// POST: encoding the requested transaction as the service does (encodeTransaction: ripple-binary-codec, the validity
// rule of docs/api.md) and one SQLite insert.
// No rate limits, schema validation, usage counting, metrics or expiry check: the service does all of that on top.
// With FLOOR_DATABASE_URL set to a PostgreSQL database, the read and the insert are prepared statements on a pool of
// 10 connections through the same driver as the service (pg), on a table shaped as the service's payloads table.
// FLOOR_ADDED_WORK_US (0 by default) adds that many microseconds of busy work to each read, for the bench's
// `floor-cost` part: what a microsecond of work on top of the floor costs on the machine of the run.
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import Fastify, { LogController } from 'fastify'
import pg from 'pg'
import { pino } from 'pino'
import { encodeTransaction } from '../src/platform/xrpl/encode-transaction.js'
import { floorUuid, floorUuidSql } from './floor-payloads.js'

const apiKey = process.env.FLOOR_API_KEY ?? ''
/** The payloads read round-robin: `floorUuid(0)` to `floorUuid(FLOOR_PAYLOADS - 1)`. */
const payloadCount = Number(process.env.FLOOR_PAYLOADS ?? '1')
const addedWorkMs = Number(process.env.FLOOR_ADDED_WORK_US ?? '0') / 1000

const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-floor-'))
process.once('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})
const COLUMNS = `uuid text primary key, project_id text not null, type text not null, status text not null,
  transaction_json text, message text, challenge text, return_url text, custom_instructions text, expires_at bigint not null,
  created_at bigint not null, resolved_at bigint, signer_address text, tx_hash text, tx_blob text, wallet_adapter text,
  public_key text, signature text, submit_engine_result text, validated_result text, validated_ledger_index bigint`
type Row = Record<string, string | number | null>
let select: (uuid: string, projectId: string) => Promise<Row | undefined>
let insert: (values: unknown[]) => Promise<unknown>
const SEED_COLUMNS = 'uuid, project_id, type, status, transaction_json, expires_at, created_at'
const seedValues = (i: number) => [
  floorUuid(i),
  'proj_floor',
  'sign',
  'pending',
  '{"TransactionType":"Payment"}',
  Date.now() + 3_600_000,
  Date.now(),
]
const postgresUrl = process.env.FLOOR_DATABASE_URL
if (postgresUrl) {
  // As the service does: int8 (epoch milliseconds) read as numbers.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 10 })
  await pool.query(`create table if not exists floor_payloads (${COLUMNS})`)
  await pool.query(
    `insert into floor_payloads (${SEED_COLUMNS}) select ${floorUuidSql('i')}, 'proj_floor', 'sign', 'pending',
     '{"TransactionType":"Payment"}', $1::bigint, $2::bigint from generate_series(0, $3::int - 1) as i on conflict do nothing`,
    [Date.now() + 3_600_000, Date.now(), payloadCount],
  )
  select = async (uuid, projectId) =>
    (
      await pool.query({
        name: 'floor-select',
        text: 'select * from floor_payloads where uuid = $1 and project_id = $2',
        values: [uuid, projectId],
      })
    ).rows[0]
  insert = (values) =>
    pool.query({
      name: 'floor-insert',
      text: `insert into floor_payloads (${SEED_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7)`,
      values,
    })
} else {
  const sqlite = new SQLite(join(dir, 'floor.db'))
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.exec(`create table floor_payloads (${COLUMNS})`)
  const selectStatement = sqlite.prepare('select * from floor_payloads where uuid = ? and project_id = ?')
  const insertStatement = sqlite.prepare(`insert into floor_payloads (${SEED_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?)`)
  select = async (uuid, projectId) => selectStatement.get(uuid, projectId) as Row | undefined
  insert = async (values) => insertStatement.run(values)
  sqlite.transaction(() => {
    for (let i = 0; i < payloadCount; i++) insertStatement.run(seedValues(i))
  })()
}
const keys = new Map([[createHash('sha256').update(apiKey).digest('hex'), 'proj_floor']])

const logger = pino({ level: 'info' }, pino.destination({ dest: join(dir, 'log'), sync: false, minLength: 4096 }))
const app = Fastify({ loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) })
app.addHook('onResponse', async (request, reply) => {
  request.log.info({ method: request.method, url: request.url, statusCode: reply.statusCode }, 'request')
})
function projectOf(authorization: unknown): string | undefined {
  return keys.get(createHash('sha256').update(String(authorization).slice('Bearer '.length)).digest('hex'))
}
app.post('/floor', async (request, reply) => {
  const projectId = projectOf(request.headers.authorization)
  if (!projectId) return reply.code(401).send({ error: 'Invalid API key' })
  const { type, transaction } = request.body as { type: string; transaction: Record<string, unknown> }
  encodeTransaction(transaction)
  const created = Date.now()
  const id = randomUUID()
  await insert([id, projectId, type, 'pending', JSON.stringify(transaction), created + 300_000, created])
  return reply.code(201).send({
    uuid: id,
    type,
    status: 'pending',
    signingUrl: `http://127.0.0.1/sign/${id}`,
    expiresAt: new Date(created + 300_000).toISOString(),
    createdAt: new Date(created).toISOString(),
  })
})
app.get('/floor/:uuid', async (request, reply) => {
  if (addedWorkMs > 0) for (const until = performance.now() + addedWorkMs; performance.now() < until; );
  const projectId = projectOf(request.headers.authorization)
  if (!projectId) return reply.code(401).send({ error: 'Invalid API key' })
  const row = await select((request.params as { uuid: string }).uuid, projectId)
  if (!row) return reply.code(404).send({ error: 'Payload not found' })
  const iso = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : null)
  return {
    uuid: row.uuid,
    type: row.type,
    status: row.status,
    signerAddress: row.signer_address,
    txHash: row.tx_hash,
    walletAdapter: row.wallet_adapter,
    expiresAt: iso(row.expires_at),
    createdAt: iso(row.created_at),
    resolvedAt: iso(row.resolved_at),
    txBlob: row.tx_blob,
  }
})
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
process.stdout.write(`listening on ${typeof address === 'object' && address ? address.port : ''}\n`)
