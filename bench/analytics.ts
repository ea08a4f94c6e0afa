// The analytics query as a project grows: a SQLite project seeded with 10,000 and then 1,000,000 payloads (spread over
// 60 days and every status, with the daily rollup PayloadService keeps beside them; a quick run stops at 100,000, as
// seeding a million took 26 of its seconds), timed
// through the service and through the HTTP endpoint with a dashboard session. Rows are written in bulk with
// better-sqlite3, because creating a million payloads one request at a time would measure something else.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import SQLite from 'better-sqlite3'
import { loadConfig } from '../src/config.js'
import { PAYLOAD_TYPES } from '../src/features/payloads/model.js'
import { startService } from '../src/main.js'
import { ManualClock } from '../src/platform/clock.js'
import { createLogger } from '../src/platform/logger.js'
import { utcDay, utcMonth } from '../src/platform/utc.js'

const NOW_MS = Date.UTC(2026, 5, 30, 12)
const DAYS = 60
const DAY_MS = 86_400_000
const TTL_MS = 300_000
const RUNS = 5
const BATCH_ROWS = 100_000
const WALLETS = ['xaman', 'xaman', 'xaman', 'xaman', 'crossmark', 'crossmark', 'gemwallet', 'ledger'] as const
const SIGNER = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'
const TRANSACTION_JSON = JSON.stringify({ TransactionType: 'Payment', Destination: SIGNER, Amount: '1000000' })

interface Row {
  payloads: number
  rollupRows: number
  service30dMs: number
  service7dMs: number
  http30dMs: number
}

export async function benchAnalytics(quick = false): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-analytics-bench-'))
  const path = join(dir, 'analytics.db')
  const config = loadConfig({ DATABASE_URL: `sqlite:${path}`, PORT: '0', PUBLIC_URL: 'http://bench.test' })
  const service = await startService(config, {
    clock: new ManualClock(NOW_MS),
    logger: createLogger('silent'),
    listen: false,
    workers: false,
  })
  const raw = new SQLite(path)
  // Seeding only: a large page cache keeps a million random-UUID inserts from thrashing the disk.
  raw.pragma('cache_size = -262144')
  try {
    const ctx = service.ctx
    const account = await ctx.accounts.recordSignIn({ issuer: 'https://idp.bench', subject: 'bench', email: undefined, name: 'Bench' })
    const { project } = await ctx.projects.createProject({ name: 'Analytics bench', plan: 'pro', accountId: account.id })
    const { token } = await ctx.sessions.start(account.id)
    const request = { method: 'GET' as const, url: `/api/v1/projects/${project.id}/analytics`, headers: { cookie: `cs_session=${token}` } }

    const rows: Row[] = []
    let seeded = 0
    for (const target of [10_000, quick ? 100_000 : 1_000_000]) {
      seedPayloads(raw, project.id, target - seeded)
      seeded = target
      rows.push({
        payloads: target,
        rollupRows: (raw.prepare('select count(*) as n from payload_daily_counts').get() as { n: number }).n,
        service30dMs: await medianMs(() => ctx.accountProjects.analytics(account.id, project.id, '30d')),
        service7dMs: await medianMs(() => ctx.accountProjects.analytics(account.id, project.id, '7d')),
        http30dMs: await medianMs(async () => {
          const response = await service.app.inject(request)
          if (response.statusCode !== 200) throw new Error(`analytics answered ${response.statusCode}: ${response.body}`)
        }),
      })
    }
    return [
      `### Analytics on SQLite (median of ${RUNS} runs; payloads over ${DAYS} days, every status)`,
      '',
      '| payloads in the project | rollup rows | query 30d | query 7d | GET .../analytics 30d (in-process HTTP) |',
      '|---:|---:|---:|---:|---:|',
      ...rows.map(
        (r) =>
          `| ${r.payloads.toLocaleString('en')} | ${r.rollupRows.toLocaleString('en')} | ${formatMs(r.service30dMs)} | ${formatMs(r.service7dMs)} | ${formatMs(r.http30dMs)} |`,
      ),
      '',
      'The query reads the daily rollup (one row per day, status and wallet), so its cost follows the number of',
      'days and wallets, not the number of payloads.',
    ].join('\n')
  } finally {
    raw.close()
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Writes `count` payloads and adds them to the daily rollup and the monthly usage, as PayloadService would. */
function seedPayloads(db: SQLite.Database, projectId: string, count: number): void {
  const insertPayload = db.prepare(
    `insert into payloads (uuid, project_id, type, status, transaction_json, message, challenge, return_url, custom_instructions,
       expires_at, created_at, resolved_at, signer_address, tx_hash, tx_blob, wallet_adapter, public_key, signature,
       submit_engine_result, validated_result, validated_ledger_index)
     values (?, ?, ?, ?, ?, ?, ?, null, null, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, null)`,
  )
  const addDailyCount = db.prepare(
    `insert into payload_daily_counts (project_id, day, status, wallet_adapter, count) values (?, ?, ?, ?, ?)
     on conflict (project_id, day, status, wallet_adapter, shard) do update set count = count + excluded.count`,
  )
  // The month's quota granted and used, in the one usage shard SQLite keeps.
  const addUsage = db.prepare(
    `insert into usage_shards (project_id, month, shard, granted, used) values (?, ?, 0, ?, ?)
     on conflict (project_id, month, shard) do update set granted = granted + excluded.granted, used = used + excluded.used`,
  )
  const writeBatch = db.transaction((size: number) => {
    const daily = new Map<string, number>()
    const monthly = new Map<string, number>()
    for (let i = 0; i < size; i++) {
      const payload = randomPayload()
      insertPayload.run(
        randomUUID(),
        projectId,
        payload.type,
        payload.status,
        payload.type === 'sign' || payload.type === 'signAndSubmit' ? TRANSACTION_JSON : null,
        payload.type === 'signMessage' ? 'Sign in to the bench shop' : null,
        payload.type === 'connect' ? 'bench.test wants you to connect your XRPL account' : null,
        payload.createdAtMs + TTL_MS,
        payload.createdAtMs,
        payload.resolvedAtMs,
        payload.status === 'signed' ? SIGNER : null,
        payload.status === 'signed' && payload.type !== 'connect' && payload.type !== 'signMessage'
          ? randomBytes(32).toString('hex')
          : null,
        null,
        payload.walletAdapter,
        payload.status === 'signed' && (payload.type === 'connect' || payload.type === 'signMessage') ? '02'.padEnd(66, 'A') : null,
        payload.status === 'signed' && (payload.type === 'connect' || payload.type === 'signMessage') ? 'AB'.repeat(35) : null,
        payload.status === 'signed' && payload.type === 'signAndSubmit' ? 'tesSUCCESS' : null,
      )
      const key = `${utcDay(payload.createdAtMs)}|${payload.status}|${payload.walletAdapter ?? ''}`
      daily.set(key, (daily.get(key) ?? 0) + 1)
      const month = utcMonth(payload.createdAtMs)
      monthly.set(month, (monthly.get(month) ?? 0) + 1)
    }
    for (const [key, n] of daily) {
      const [day, status, wallet] = key.split('|') as [string, string, string]
      addDailyCount.run(projectId, day, status, wallet, n)
    }
    for (const [month, n] of monthly) addUsage.run(projectId, month, n, n)
  })
  for (let written = 0; written < count; written += BATCH_ROWS) writeBatch(Math.min(BATCH_ROWS, count - written))
}

/** One payload as the service would have left it: 60% signed, 15% rejected, 24% expired, 1% still pending (created in the last 5 minutes). */
function randomPayload() {
  const type = PAYLOAD_TYPES[Math.floor(Math.random() * PAYLOAD_TYPES.length)] as string
  const roll = Math.random()
  const wallet = WALLETS[Math.floor(Math.random() * WALLETS.length)] as string
  if (roll < 0.01)
    return { type, status: 'pending', createdAtMs: NOW_MS - Math.floor(Math.random() * TTL_MS), resolvedAtMs: null, walletAdapter: null }
  const createdAtMs = NOW_MS - TTL_MS - Math.floor(Math.random() * (DAYS * DAY_MS - TTL_MS))
  if (roll < 0.61)
    return { type, status: 'signed', createdAtMs, resolvedAtMs: createdAtMs + Math.floor(Math.random() * TTL_MS), walletAdapter: wallet }
  if (roll < 0.76)
    return { type, status: 'rejected', createdAtMs, resolvedAtMs: createdAtMs + Math.floor(Math.random() * TTL_MS), walletAdapter: wallet }
  return { type, status: 'expired', createdAtMs, resolvedAtMs: createdAtMs + TTL_MS, walletAdapter: null }
}

async function medianMs(run: () => Promise<unknown>): Promise<number> {
  await run()
  const timings: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const startedAt = performance.now()
    await run()
    timings.push(performance.now() - startedAt)
  }
  return timings.sort((a, b) => a - b)[Math.floor(RUNS / 2)] as number
}

function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`
}
