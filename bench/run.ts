// `npm run bench`: drives the running service over loopback and prints, in one run, requests per second and
// p50/p99 latency for creating and reading payloads beside a bare Fastify route on the same machine, then the
// webhook and analytics figures. Plan limits are raised through configuration (LIMITS_PRO), not switched off,
// so the limiter's cost is in the figures.
//   npm run bench -- --quick      3-second runs
//   npm run bench -- --postgres   the payload API on PostgreSQL with one and with two instances as well
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '../test/support/databases.js'
import { benchAnalytics } from './analytics.js'
import { type LoadResult, load, startProcess, stopProcess, table } from './http.js'
import { benchWebhooks } from './webhooks.js'

const quick = process.argv.includes('--quick')
const postgres = process.argv.includes('--postgres')
const seconds = quick ? 3 : 10
const connections = 10

const RAISED_LIMITS = JSON.stringify({ requestsPerMinute: 100_000_000, minPollIntervalMs: 0, monthlyPayloads: 100_000_000 })
const SIGN_BODY = JSON.stringify({
  type: 'sign',
  transaction: { TransactionType: 'Payment', Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', Amount: '1000000' },
})
const POST_NAME = 'POST /api/v1/payloads'
const GET_NAME = 'GET /api/v1/payloads/{uuid}'

async function benchBareRoute(): Promise<Record<string, LoadResult>> {
  const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], {}, /listening on (\d+)/)
  const url = `http://127.0.0.1:${bare.match[1]}/bare`
  try {
    await load('warm-up', { url, seconds: 2, connections })
    return {
      [POST_NAME]: await load('POST /bare', {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: SIGN_BODY,
        seconds,
        connections,
      }),
      [GET_NAME]: await load('GET /bare', { url, seconds, connections }),
    }
  } finally {
    await stopProcess(bare.child)
  }
}

/** Runs POST and GET against `instances` service processes sharing one database; load is split evenly. */
async function benchService(databaseUrl: string, instances: number): Promise<LoadResult[]> {
  const env = { DATABASE_URL: databaseUrl, PORT: '0', LIMITS_PRO: RAISED_LIMITS, LOG_LEVEL: 'info' }
  const project = JSON.parse(
    execFileSync(process.execPath, ['dist/cli.js', 'project', 'create', '--name', 'bench', '--plan', 'pro', '--json'], {
      env: { ...process.env, ...env },
    }).toString(),
  )
  const servers = await Promise.all(
    Array.from({ length: instances }, () => startProcess(['dist/cli.js', 'serve'], env, /listening on http:\/\/127\.0\.0\.1:(\d+)/)),
  )
  const bases = servers.map((s) => `http://127.0.0.1:${s.match[1]}/api/v1`)
  const headers = { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' }
  const perInstance = Math.max(1, Math.round(connections / instances))
  const together = async (name: string, request: (base: string) => Parameters<typeof load>[1]) => {
    const parts = await Promise.all(bases.map((base) => load(name, { ...request(base), connections: perInstance })))
    return combine(name, parts)
  }
  try {
    await together('warm-up', (base) => ({ url: `${base}/payloads`, method: 'POST', headers, body: SIGN_BODY, seconds: 2 }))
    const post = await together(POST_NAME, (base) => ({ url: `${base}/payloads`, method: 'POST', headers, body: SIGN_BODY, seconds }))
    const uuid = (await (await fetch(`${bases[0]}/payloads`, { method: 'POST', headers, body: SIGN_BODY })).json()).uuid
    const get = await together(GET_NAME, (base) => ({
      url: `${base}/payloads/${uuid}`,
      headers: { authorization: headers.authorization },
      seconds,
    }))
    return [post, get]
  } finally {
    await Promise.all(servers.map((s) => stopProcess(s.child)))
  }
}

/** Sums throughput across instances; latency percentiles are the worst instance's (a conservative figure). */
function combine(name: string, parts: LoadResult[]): LoadResult {
  return {
    name,
    requestsPerSecond: parts.reduce((sum, p) => sum + p.requestsPerSecond, 0),
    p50Ms: Math.max(...parts.map((p) => p.p50Ms)),
    p99Ms: Math.max(...parts.map((p) => p.p99Ms)),
    non2xx: parts.reduce((sum, p) => sum + p.non2xx, 0),
    errors: parts.reduce((sum, p) => sum + p.errors, 0),
  }
}

async function benchPayloadApi(): Promise<string> {
  const baseline = await benchBareRoute()
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'))
  const sections: string[] = []
  try {
    const rows = await benchService(`sqlite:${join(dir, 'bench.db')}`, 1)
    sections.push(
      `### Payload API on SQLite (${seconds} s per run, ${connections} connections, loopback)`,
      '',
      table([...rows, ...Object.values(baseline)], baseline),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  if (postgres) {
    for (const instances of [1, 2]) {
      const database = await createTestDatabase('postgres')
      try {
        const rows = await benchService(database.url, instances)
        sections.push('', `### Payload API on PostgreSQL, ${instances} instance${instances > 1 ? 's' : ''}`, '', table(rows, baseline))
      } finally {
        await database.drop()
      }
    }
  }
  return sections.join('\n')
}

const sections = [await benchPayloadApi(), await benchWebhooks(), await benchAnalytics()]
process.stdout.write(`\n${sections.join('\n\n')}\n`)
