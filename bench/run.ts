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

// The request rate and the monthly count are raised; the Pro plan's 1-second poll gate stays as it is, so the reads
// go round-robin over more payloads than a second's worth of reads (POLLED_PAYLOADS) and every one is let through.
const RAISED_LIMITS = JSON.stringify({ requestsPerMinute: 100_000_000, monthlyPayloads: 100_000_000 })
const POLLED_PAYLOADS = 40_000
const SIGN_BODY = JSON.stringify({
  type: 'sign',
  transaction: { TransactionType: 'Payment', Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', Amount: '1000000' },
})
const POST_NAME = 'POST /api/v1/payloads'
const GET_NAME = 'GET /api/v1/payloads/{uuid}'
const FLOOR_GET_NAME = 'GET floor: log line, key hash, SQLite read'
const FLOOR_POST_NAME = 'POST floor: log line, key hash, codec, SQLite insert'
const FLOOR_ENV = { FLOOR_API_KEY: 'floor-bench-key', FLOOR_UUID: '5b1b7e4e-8d55-4d2a-9a0e-3f4c2b1a0d9e' }

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

/** The least an authenticated, logged read and creation of a payload cost here (bench/floor-server.ts). */
async function benchFloor(): Promise<LoadResult[]> {
  const floor = await startProcess(['--import', 'tsx', 'bench/floor-server.ts'], FLOOR_ENV, /listening on (\d+)/)
  const base = `http://127.0.0.1:${floor.match[1]}/floor`
  const authorization = `Bearer ${FLOOR_ENV.FLOOR_API_KEY}`
  const post = { url: base, method: 'POST' as const, headers: { authorization, 'content-type': 'application/json' }, body: SIGN_BODY }
  const get = { url: `${base}/${FLOOR_ENV.FLOOR_UUID}`, headers: { authorization } }
  try {
    await load('warm-up', { ...post, seconds: 2, connections })
    return [await load(FLOOR_POST_NAME, { ...post, seconds, connections }), await load(FLOOR_GET_NAME, { ...get, seconds, connections })]
  } finally {
    await stopProcess(floor.child)
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
    const paths = await payloadPaths(bases[0]!, headers)
    let next = 0
    const get = await together(GET_NAME, (base) => ({
      url: `${base}/payloads`,
      headers: { authorization: headers.authorization },
      seconds,
      nextPath: () => paths[next++ % paths.length]!,
    }))
    return [post, get]
  } finally {
    await Promise.all(servers.map((s) => stopProcess(s.child)))
  }
}

/** The paths of at least POLLED_PAYLOADS of the project's payloads, creating more first if there are fewer. */
async function payloadPaths(base: string, headers: Record<string, string>): Promise<string[]> {
  // A Set: creations still committing when the listing starts shift its pages, so a payload can be listed twice.
  const listed = new Set<string>()
  for (let offset = 0; ; offset += 100) {
    const page = (await (await fetch(`${base}/payloads?limit=100&offset=${offset}`, { headers })).json()) as {
      payloads: { uuid: string }[]
    }
    for (const { uuid } of page.payloads) listed.add(new URL(`${base}/payloads/${uuid}`).pathname)
    if (page.payloads.length < 100) break
  }
  const paths = [...listed]
  while (paths.length < POLLED_PAYLOADS) {
    const batch = Array.from({ length: Math.min(50, POLLED_PAYLOADS - paths.length) }, async () => {
      const created = (await (await fetch(`${base}/payloads`, { method: 'POST', headers, body: SIGN_BODY })).json()) as { uuid: string }
      return new URL(`${base}/payloads/${created.uuid}`).pathname
    })
    paths.push(...(await Promise.all(batch)))
  }
  return paths
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
  const floor = await benchFloor()
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'))
  const sections: string[] = []
  try {
    const rows = await benchService(`sqlite:${join(dir, 'bench.db')}`, 1)
    sections.push(
      `### Payload API on SQLite (${seconds} s per run, ${connections} connections, loopback)`,
      '',
      table([...rows, ...Object.values(baseline), ...floor], {
        ...baseline,
        [FLOOR_POST_NAME]: baseline[POST_NAME]!,
        [FLOOR_GET_NAME]: baseline[GET_NAME]!,
      }),
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
