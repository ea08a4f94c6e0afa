// Floors for `npm run bench`: the least an authenticated, logged read or creation of a payload can cost on this
// machine. Fastify, one pino line per request to a file, the API key's SHA-256 looked up in a map, and then
// GET: one prepared SQLite point read of a payload row (WAL, the service's schema) and the JSON answer;
// POST: ripple-binary-codec encoding the requested transaction (the validity rule of docs/api.md) and one SQLite insert.
// No rate limits, schema validation, usage counting, metrics or expiry check: the service does all of that on top.
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import Fastify, { LogController } from 'fastify'
import { pino } from 'pino'
import { encode } from 'ripple-binary-codec'

const apiKey = process.env.FLOOR_API_KEY ?? ''
const uuid = process.env.FLOOR_UUID ?? ''

const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-floor-'))
process.once('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})
const sqlite = new SQLite(join(dir, 'floor.db'))
sqlite.pragma('journal_mode = WAL')
sqlite.pragma('synchronous = NORMAL')
sqlite.exec(`create table payloads (uuid text primary key, project_id text not null, type text not null, status text not null,
  transaction_json text, message text, challenge text, return_url text, custom_instructions text, expires_at bigint not null,
  created_at bigint not null, resolved_at bigint, signer_address text, tx_hash text, tx_blob text, wallet_adapter text,
  public_key text, signature text, submit_engine_result text, validated_result text, validated_ledger_index bigint)`)
sqlite
  .prepare('insert into payloads (uuid, project_id, type, status, transaction_json, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?)')
  .run(uuid, 'proj_floor', 'sign', 'pending', '{"TransactionType":"Payment"}', Date.now() + 3_600_000, Date.now())
const select = sqlite.prepare('select * from payloads where uuid = ? and project_id = ?')
const insert = sqlite.prepare(
  'insert into payloads (uuid, project_id, type, status, transaction_json, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?)',
)
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
  encode(transaction)
  const created = Date.now()
  const id = randomUUID()
  insert.run(id, projectId, type, 'pending', JSON.stringify(transaction), created + 300_000, created)
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
  const projectId = projectOf(request.headers.authorization)
  if (!projectId) return reply.code(401).send({ error: 'Invalid API key' })
  const row = select.get((request.params as { uuid: string }).uuid, projectId) as Record<string, string | number | null> | undefined
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
