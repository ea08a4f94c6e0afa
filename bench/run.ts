// `npm run bench`: drives the running service over loopback and prints, in one run, requests per second and
// p50/p99 latency for creating and reading payloads beside a bare Fastify route on the same machine, then the
// webhook and analytics figures. Plan limits are raised through configuration (LIMITS_PRO), not switched off,
// so the limiter's cost is in the figures. On PostgreSQL (when it answers at TEST_POSTGRES_URL) it also runs pgbench
// with the same client count on a scratch database, and one and two instances; the goals' ratios are taken within
// this one run, since the machine is shared and its speed varies from one minute to the next.
//   npm run bench -- --quick           3-second runs after 1-second warm-ups, no poll gate, 2,000 webhook events, analytics up to 100,000 payloads
//                                      (under two minutes)
//   npm run bench -- --only=postgres   some parts only: sqlite, postgres, webhooks, analytics, memory
//   npm run bench -- --memory          also the memory part: RSS after 1,000,000 payloads created and read
//   npm run bench -- --only=floor-cost  what each microsecond of work on top of the SQLite GET floor costs here
//   npm run bench -- --webhook-rate=500  the PostgreSQL webhook part offered this many events a second (1,200 by default)
//   npm run bench -- --no-redis        the PostgreSQL parts without Redis (by default they run with REDIS_URL, as deployed,
//                                      when Redis answers at TEST_REDIS_URL)
import { type ChildProcess, execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createTestDatabase, postgresSkip } from '../test/support/databases.js'
import { redisAvailable, TEST_REDIS_URL } from '../test/support/redis.js'
import { benchAnalytics } from './analytics.js'
import { floorUuid } from './floor-payloads.js'
import { busyBetween, type Goal, goalsTable, type LoadResult, load, processorTicks, startProcess, stopProcess, table } from './http.js'
import { benchMemory } from './memory.js'
import { benchWebhooks, type benchWebhooksPostgres, LIVE_EVENTS_PER_SECOND } from './webhooks.js'

const quick = process.argv.includes('--quick')
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',')
const webhookRate = Number(
  process.argv.find((arg) => arg.startsWith('--webhook-rate='))?.slice('--webhook-rate='.length) ?? LIVE_EVENTS_PER_SECOND,
)
if (!(webhookRate > 0)) throw new Error('--webhook-rate takes a number of events a second, above 0')
const wanted = (part: string) =>
  only ? only.includes(part) : part !== 'floor-cost' && (part !== 'memory' || process.argv.includes('--memory'))
const postgres = wanted('postgres') && !postgresSkip
const seconds = quick ? 3 : 10
/** Each server's warm-up before its measured runs: long enough for its code to be compiled. */
const warmUpSeconds = quick ? 1 : 2
// The PostgreSQL deployment is instances on one database and one Redis (docs/deployment.md): its rate limits, poll gate
// and live events go through Redis, and the PostgreSQL parts measure them there.
const redisUrl = redisAvailable && !process.argv.includes('--no-redis') ? TEST_REDIS_URL : undefined
const deployment = redisUrl ? 'with Redis' : 'without Redis'
const connections = 10
const goals: Goal[] = []

// The request rate and the monthly count are raised; the Pro plan's 1-second poll gate stays as it is, so the reads
// go round-robin over more payloads than a second's worth of reads (POLLED_PAYLOADS) and every one is let through.
// Quick runs, for a check in under two minutes, configure the gate off (0) so that 5,000 payloads are enough: their GET
// figures leave out the gate's cost; the full run's keep it.
const RAISED_LIMITS = JSON.stringify({
  requestsPerMinute: 100_000_000,
  monthlyPayloads: 100_000_000,
  ...(quick && { minPollIntervalMs: 0 }),
})
const POLLED_PAYLOADS = quick ? 5_000 : 40_000
const SIGN_TRANSACTION = { TransactionType: 'Payment', Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', Amount: '1000000' }
const SIGN_BODY = JSON.stringify({ type: 'sign', transaction: SIGN_TRANSACTION })
const POST_NAME = 'POST /api/v1/payloads'
const GET_NAME = 'GET /api/v1/payloads/{uuid}'
const KEYED_POST_NAME = 'POST /api/v1/payloads with an Idempotency-Key'
const FLOOR_GET_NAME = 'GET floor: log line, key hash, SQLite read'
const FLOOR_POST_NAME = 'POST floor: log line, key hash, codec, SQLite insert'
const FLOOR_ENV = { FLOOR_API_KEY: 'floor-bench-key', FLOOR_PAYLOADS: String(POLLED_PAYLOADS) }

async function benchBareRoute(): Promise<Record<string, LoadResult>> {
  const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], {}, /listening on (\d+)/)
  const url = `http://127.0.0.1:${bare.match[1]}/bare`
  try {
    await load('warm-up', { url, seconds: warmUpSeconds, connections })
    return {
      [POST_NAME]: await load('POST /bare', {
        url,
        serverPids: pids(bare.child),
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: SIGN_BODY,
        seconds,
        connections,
      }),
      [GET_NAME]: await load('GET /bare', { url, seconds, connections, serverPids: pids(bare.child) }),
    }
  } finally {
    await stopProcess(bare.child)
  }
}

/**
 * The SQLite GET floor with 0, 20, 40 and 80 µs of busy work added to each read: how much processor time and
 * throughput a microsecond of work on top of the floor costs on this machine. Beyond the work itself, the answer's
 * write costs more, and the load generator is woken more often, as each read takes longer (docs/performance.md).
 */
async function benchFloorCost(): Promise<string> {
  const rows: LoadResult[] = []
  for (const addedUs of [0, 20, 40, 80]) {
    const floor = await startProcess(
      ['--import', 'tsx', 'bench/floor-server.ts'],
      { ...FLOOR_ENV, FLOOR_ADDED_WORK_US: String(addedUs) },
      /listening on (\d+)/,
    )
    try {
      const authorization = `Bearer ${FLOOR_ENV.FLOOR_API_KEY}`
      let next = 0
      const get = {
        url: `http://127.0.0.1:${floor.match[1]}/floor`,
        headers: { authorization },
        nextPath: () => `/floor/${floorUuid(next++ % POLLED_PAYLOADS)}`,
        connections,
      }
      await load('warm-up', { ...get, seconds: warmUpSeconds })
      rows.push(await load(`${FLOOR_GET_NAME}, ${addedUs} µs of work added`, { ...get, seconds, serverPids: pids(floor.child) }))
    } finally {
      await stopProcess(floor.child)
    }
  }
  const base = rows[0]!
  const lines = rows.slice(1).map((row, i) => {
    const addedUs = [20, 40, 80][i]!
    const cpu = row.serverCpuUs !== undefined && base.serverCpuUs !== undefined ? row.serverCpuUs - base.serverCpuUs : undefined
    return `| ${addedUs} µs | ${row.requestsPerSecond} | ${share(row.requestsPerSecond, base.requestsPerSecond)} | ${cpu ?? ''} µs |`
  })
  return [
    `### What work on top of the SQLite GET floor costs here (${seconds} s per run, ${connections} connections)`,
    '',
    table(rows),
    '',
    '| work added to each read | req/s | share of the floor | processor time added a read |',
    '|---|---:|---:|---:|',
    ...lines,
  ].join('\n')
}

/**
 * The least an authenticated, logged read and creation of a payload cost here (bench/floor-server.ts), with
 * `instances` floor processes sharing one database (on PostgreSQL) and the load split evenly, as for the service.
 */
async function benchFloor(databaseUrl?: string, instances = 1): Promise<LoadResult[]> {
  const env = databaseUrl ? { ...FLOOR_ENV, FLOOR_DATABASE_URL: databaseUrl } : FLOOR_ENV
  const floors: Awaited<ReturnType<typeof startProcess>>[] = []
  try {
    // One after the other: each creates the table and its rows where they are missing.
    for (let i = 0; i < instances; i++) {
      floors.push(await startProcess(['--import', 'tsx', 'bench/floor-server.ts'], env, /listening on (\d+)/))
    }
    const bases = floors.map((floor) => `http://127.0.0.1:${floor.match[1]}/floor`)
    const serverPids = floors.flatMap((floor) => pids(floor.child))
    const authorization = `Bearer ${FLOOR_ENV.FLOOR_API_KEY}`
    const post = (url: string) => ({
      url,
      method: 'POST' as const,
      headers: { authorization, 'content-type': 'application/json' },
      body: SIGN_BODY,
    })
    // As many payloads as the service's GET run reads, round-robin, as it reads them.
    let next = 0
    const get = (url: string) => ({ url, headers: { authorization }, nextPath: () => `/floor/${floorUuid(next++ % POLLED_PAYLOADS)}` })
    const name = (floorName: string) =>
      `${databaseUrl ? floorName.replace('SQLite', 'PostgreSQL') : floorName}${instances > 1 ? `, ${instances} instances` : ''}`
    await loadTogether('warm-up', bases, serverPids, (url) => ({ ...post(url), seconds: warmUpSeconds }))
    return [
      await loadTogether(name(FLOOR_POST_NAME), bases, serverPids, (url) => ({ ...post(url), seconds })),
      await loadTogether(name(FLOOR_GET_NAME), bases, serverPids, (url) => ({ ...get(url), seconds })),
    ]
  } finally {
    await Promise.all(floors.map((floor) => stopProcess(floor.child)))
  }
}

/**
 * Drives every base URL at once with its share of the connections, and sums what they answered; `serverPids` are
 * all the servers' processes, whose processor time is counted over the whole load.
 */
async function loadTogether(
  name: string,
  bases: string[],
  serverPids: number[],
  request: (base: string) => Omit<Parameters<typeof load>[1], 'connections' | 'serverPids'>,
): Promise<LoadResult> {
  const perInstance = Math.max(1, Math.round(connections / bases.length))
  const parts = await Promise.all(
    bases.map((base, i) => load(name, { ...request(base), connections: perInstance, ...(i === 0 && { serverPids }) })),
  )
  return combine(name, parts)
}

/** Runs POST and GET against `instances` service processes sharing one database; load is split evenly. */
async function benchService(databaseUrl: string, instances: number, redis?: string): Promise<LoadResult[]> {
  const env = { DATABASE_URL: databaseUrl, PORT: '0', LIMITS_PRO: RAISED_LIMITS, LOG_LEVEL: 'info', ...(redis && { REDIS_URL: redis }) }
  const project = JSON.parse(
    execFileSync(process.execPath, ['dist/cli.js', 'project', 'create', '--name', 'bench', '--plan', 'pro', '--json'], {
      env: { ...process.env, ...env },
    }).toString(),
  )
  const servers = await Promise.all(
    Array.from({ length: instances }, () => startProcess(['bin/countersign.js', 'serve'], env, /listening on http:\/\/127\.0\.0\.1:(\d+)/)),
  )
  const bases = servers.map((s) => `http://127.0.0.1:${s.match[1]}/api/v1`)
  const headers = { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' }
  const serverPids = servers.flatMap((server) => pids(server.child))
  const together = (name: string, request: Parameters<typeof loadTogether>[3]) => loadTogether(name, bases, serverPids, request)
  try {
    await together('warm-up', (base) => ({ url: `${base}/payloads`, method: 'POST', headers, body: SIGN_BODY, seconds: warmUpSeconds }))
    const post = await together(POST_NAME, (base) => ({ url: `${base}/payloads`, method: 'POST', headers, body: SIGN_BODY, seconds }))
    const paths = await payloadPaths(bases[0]!, headers)
    let next = 0
    const get = await together(GET_NAME, (base) => ({
      url: `${base}/payloads`,
      headers: { authorization: headers.authorization },
      seconds,
      nextPath: () => paths[next++ % paths.length]!,
    }))
    // Each with a key of its own, as an integrator that follows Stripe's advice sends every creation.
    const keyed = await together(KEYED_POST_NAME, (base) => ({
      url: `${base}/payloads`,
      method: 'POST',
      headers,
      body: SIGN_BODY,
      seconds,
      nextHeaders: () => ({ 'idempotency-key': randomUUID() }),
    }))
    return [post, get, keyed]
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
    const batch = Array.from({ length: Math.min(200, POLLED_PAYLOADS - paths.length) }, async () => {
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
    // The parts run at the same time: each saw the whole machine, and the first counts every server's processor time.
    machineBusy: parts[0]?.machineBusy,
    serverCpuUs:
      parts[0]?.serverCpuUs === undefined
        ? undefined
        : Math.round((parts[0].serverCpuUs * parts[0].requestsPerSecond) / parts.reduce((sum, p) => sum + p.requestsPerSecond, 0)),
  }
}

/** A started process's pid, as a list (none if it has none). */
const pids = (child: ChildProcess) => (child.pid === undefined ? [] : [child.pid])

/** pgbench's rate for a plain one-row insert per transaction, with the service's client count, on a scratch database. */
function pgbenchPlainInsert(databaseUrl: string): number {
  const url = new URL(databaseUrl)
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-pgbench-'))
  try {
    const script = join(dir, 'insert.sql')
    writeFileSync(
      script,
      `insert into pgbench_payloads (uuid, project_id, type, status, transaction_json, expires_at, created_at)
       values (gen_random_uuid()::text, 'proj_bench', 'sign', 'pending', '${JSON.stringify(SIGN_TRANSACTION)}', 1, 1);\n`,
    )
    const output = execFileSync(
      'pgbench',
      [
        '-n',
        '-M',
        'prepared',
        '-c',
        String(connections),
        '-j',
        '2',
        '-T',
        String(seconds),
        '-f',
        script,
        '-h',
        url.hostname,
        '-p',
        url.port || '5432',
        '-U',
        decodeURIComponent(url.username || 'postgres'),
        url.pathname.slice(1),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const tps = /tps = ([\d.]+)/.exec(output)
    if (!tps) throw new Error(`pgbench printed no rate: ${output}`)
    return Math.round(Number(tps[1]))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const share = (part: number, whole: number) => `${Math.round((100 * part) / whole)}%`
const find = (rows: LoadResult[], name: string) => rows.find((row) => row.name === name)!

async function benchPayloadApi(): Promise<string> {
  const baseline = await benchBareRoute()
  const sections: string[] = []
  if (wanted('sqlite')) {
    const floor = await benchFloor()
    const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'))
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
      const [post, get] = rows as [LoadResult, LoadResult]
      const [floorPost, floorGet] = floor as [LoadResult, LoadResult]
      goals.push(
        {
          goal: 'SQLite: POST at least 80% of the floor',
          measured: `${post.requestsPerSecond} against ${floorPost.requestsPerSecond} req/s: ${share(post.requestsPerSecond, floorPost.requestsPerSecond)}`,
          met: post.requestsPerSecond >= 0.8 * floorPost.requestsPerSecond,
        },
        {
          goal: 'SQLite: GET at least 80% of the floor',
          measured: `${get.requestsPerSecond} against ${floorGet.requestsPerSecond} req/s: ${share(get.requestsPerSecond, floorGet.requestsPerSecond)}`,
          met: get.requestsPerSecond >= 0.8 * floorGet.requestsPerSecond,
        },
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  if (postgres) {
    const scratch = await createTestDatabase('postgres')
    let pgbenchTps: number
    let pgbenchBusy: number | undefined
    let floor: LoadResult[]
    let floorTwice: LoadResult[]
    try {
      const client = new pg.Client({ connectionString: scratch.url })
      await client.connect()
      await client.query('create table pgbench_payloads (like payloads including all)')
      await client.end()
      const before = processorTicks()
      pgbenchTps = pgbenchPlainInsert(scratch.url)
      pgbenchBusy = busyBetween(before, processorTicks())
      floor = await benchFloor(scratch.url)
      floorTwice = await benchFloor(scratch.url, 2)
    } finally {
      await scratch.drop()
    }
    const byInstances: LoadResult[][] = []
    for (const instances of [1, 2]) {
      const database = await createTestDatabase('postgres')
      try {
        const rows = await benchService(database.url, instances, redisUrl)
        byInstances.push(rows)
        sections.push(
          '',
          `### Payload API on PostgreSQL, ${instances} instance${instances > 1 ? 's' : ''}, ${deployment}`,
          '',
          table(rows, baseline),
        )
      } finally {
        await database.drop()
      }
    }
    sections.push(
      '',
      '### PostgreSQL floors in the same run',
      '',
      `pgbench, plain one-row insert per transaction into a copy of the payloads table (its indexes, no foreign key), ${connections} clients, prepared: ${pgbenchTps} transactions/s${pgbenchBusy === undefined ? '' : ` (machine busy ${Math.round(100 * pgbenchBusy)}%)`}.`,
      '',
      table([...floor, ...floorTwice]),
    )
    const post1 = find(byInstances[0]!, POST_NAME).requestsPerSecond
    const post2 = find(byInstances[1]!, POST_NAME).requestsPerSecond
    const get1 = find(byInstances[0]!, GET_NAME).requestsPerSecond
    const floorPostName = FLOOR_POST_NAME.replace('SQLite', 'PostgreSQL')
    const floorPost1 = find(floor, floorPostName).requestsPerSecond
    const floorPost2 = find(floorTwice, `${floorPostName}, 2 instances`).requestsPerSecond
    const floorGet = find(floor, FLOOR_GET_NAME.replace('SQLite', 'PostgreSQL')).requestsPerSecond
    goals.push(
      {
        goal: "PostgreSQL: POST (1 instance) at least 50% of pgbench's plain insert",
        measured: `${post1} against ${pgbenchTps}/s: ${share(post1, pgbenchTps)}`,
        met: post1 >= 0.5 * pgbenchTps,
      },
      {
        goal: 'PostgreSQL: POST with 2 instances at least 1.3 times 1 instance',
        measured:
          `${post2} against ${post1} req/s: ${(post2 / post1).toFixed(2)} times ` +
          `(the POST floor on this machine: ${floorPost2} against ${floorPost1}, ${(floorPost2 / floorPost1).toFixed(2)} times)`,
        met: post2 >= 1.3 * post1,
      },
      {
        goal: 'PostgreSQL: GET at least 60% of the prepared point-read floor',
        measured: `${get1} against ${floorGet} req/s: ${share(get1, floorGet)}`,
        met: get1 >= 0.6 * floorGet,
      },
    )
  }
  return sections.join('\n')
}

// Each part is printed when it is done, so that a part that fails does not lose the others' figures.
const print = (text: string) => process.stdout.write(`\n${text}\n`)
if (wanted('sqlite') || postgres) print(await benchPayloadApi())
if (wanted('webhooks')) {
  print(await benchWebhooks(quick))
  if (!postgresSkip) {
    const { text, goals: webhookGoals } = JSON.parse(
      execFileSync(
        process.execPath,
        ['--import', 'tsx', 'bench/webhooks-postgres.ts', String(quick), String(webhookRate), redisUrl ?? ''],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
          maxBuffer: 16 * 1024 * 1024,
        },
      ).toString(),
    ) as Awaited<ReturnType<typeof benchWebhooksPostgres>>
    print(text)
    goals.push(...webhookGoals)
  }
}
if (wanted('analytics')) print(await benchAnalytics(quick))
if (wanted('floor-cost')) print(await benchFloorCost())
if (wanted('memory')) {
  const { text, goal } = await benchMemory()
  print(text)
  goals.push(goal)
}
if (goals.length > 0) print(`### Against the goals (this run)\n\n${goalsTable(goals)}`)
