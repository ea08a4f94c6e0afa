// Webhook delivery benchmark: the embedded SQLite service in this process, its receiver in another (as an application's
// server is). Measures deliveries per second and the time from an event's commit to its receipt, while events stream in
// and when a backlog drains. Then three service processes on one PostgreSQL database, events brought by HTTP requests.
import { execFileSync, fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { startWebhookDispatcher } from '../src/features/webhooks/dispatcher/start-webhook-dispatcher.js'
import { type RunningService, startService } from '../src/main.js'
import { createLogger } from '../src/platform/logger.js'
import { createTestDatabase } from '../test/support/databases.js'
import {
  busyBetween,
  commandTicks,
  type Goal,
  processorTicks,
  processTicks,
  startProcess,
  stopProcess,
  TICKS_PER_SECOND,
  ticksSince,
} from './http.js'

const ALL_EVENTS = 5_000
const QUICK_EVENTS = 2_000
/** Rejections sent before the PostgreSQL part's measured ones (BENCH_WEBHOOK_WARM_UP sets another number, 0 for none). */
const WARM_UP_EVENTS = 1_000
const QUICK_WARM_UP_EVENTS = 300
/** The rate events are committed at in the live run: the rate the service is meant to deliver at. */
export const LIVE_EVENTS_PER_SECOND = 1_200
const RECEIPT_TIMEOUT_MS = 120_000

/** Milliseconds since the epoch, with sub-millisecond precision: comparable with the receiver's. */
const nowMs = () => performance.timeOrigin + performance.now()

interface Receiver {
  url: string
  pid: number
  /** When each payload's first delivery arrived (nowMs), once `count` payloads' have, and how many arrived again. */
  receipts(count: number): Promise<{ at: Map<string, number>; duplicates: number }>
  close(): void
}

export async function benchWebhooks(quick = false): Promise<string> {
  const EVENTS = quick ? QUICK_EVENTS : ALL_EVENTS
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-webhooks-'))
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LIMITS_PRO: '{"monthlyPayloads": 100000000, "requestsPerMinute": 100000000}',
  })
  const receiver = await startReceiver()
  const service = await startService(config, { listen: false, workers: false, logger: createLogger('warn') }).catch((error: unknown) => {
    receiver.close()
    throw error
  })
  try {
    const scope = { projectId: (await service.ctx.projects.createProject({ name: 'Bench', plan: 'pro' })).project.id, plan: 'pro' as const }
    await service.ctx.webhooks.create(scope, { url: receiver.url })
    const committedAtMs = new Map<string, number>()
    service.ctx.events.onCommit('payload.changed', ({ payload }) => committedAtMs.set(payload.uuid, nowMs()))

    // Live: events commit at a steady rate, as requests would bring them, while the dispatcher runs.
    const live = await createPending(service, scope, EVENTS)
    let dispatcher = startWebhookDispatcher(service.ctx)
    const liveStartMs = nowMs()
    let resolved = 0
    while (resolved < EVENTS) {
      const dueCount = Math.min(EVENTS, Math.floor(((nowMs() - liveStartMs) / 1000) * LIVE_EVENTS_PER_SECOND) + 1)
      while (resolved < dueCount) {
        await service.ctx.payloads.reject(live[resolved++]!, 'bench')
        // Each resolution is its own request in the service; SQLite answers synchronously, so yield as the server would.
        await setImmediate()
      }
      await sleep(1)
    }
    const eventsPerSecond = EVENTS / ((nowMs() - liveStartMs) / 1000)
    const { at: liveReceipts } = await receiver.receipts(EVENTS)
    const liveSeconds = (Math.max(...live.map((uuid) => liveReceipts.get(uuid)!)) - liveStartMs) / 1000
    const latenciesMs = live.map((uuid) => liveReceipts.get(uuid)! - committedAtMs.get(uuid)!).sort((a, b) => a - b)
    await dispatcher.stop()

    // Backlog: the events are committed with no dispatcher running (a restart, or a receiver that was down), then drained.
    const backlog = await createPending(service, scope, EVENTS)
    for (const uuid of backlog) await service.ctx.payloads.reject(uuid, 'bench')
    const drainStartMs = nowMs()
    dispatcher = startWebhookDispatcher(service.ctx)
    const { at: drainReceipts, duplicates } = await receiver.receipts(2 * EVENTS)
    const drainSeconds = (Math.max(...backlog.map((uuid) => drainReceipts.get(uuid)!)) - drainStartMs) / 1000
    await dispatcher.stop()

    const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
    const ms = (value: number) => `${value.toFixed(1)} ms`
    return [
      '## Webhook deliveries',
      '',
      `Embedded SQLite, one service process, one webhook, a receiver in its own process on 127.0.0.1 answering 204; ${count.format(EVENTS)} events each run.`,
      'Latency is from the commit of the state change to the receipt of the delivery at the receiver.',
      '',
      '| measure | result | target |',
      '| --- | --- | --- |',
      `| live: events committed per second (aiming at ${count.format(LIVE_EVENTS_PER_SECOND)}) | ${count.format(eventsPerSecond)} | |`,
      `| live: deliveries per second | ${count.format(EVENTS / liveSeconds)} | >= 1,000 |`,
      `| live: commit to receipt, p50 | ${ms(percentile(latenciesMs, 0.5))} | |`,
      `| live: commit to receipt, p99 | ${ms(percentile(latenciesMs, 0.99))} | < 100 ms |`,
      `| live: commit to receipt, max | ${ms(latenciesMs.at(-1)!)} | |`,
      `| backlog of ${count.format(EVENTS)} drained: deliveries per second | ${count.format(EVENTS / drainSeconds)} | >= 1,000 |`,
      `| deliveries received twice | ${duplicates} | 0 |`,
      '',
    ].join('\n')
  } finally {
    await service.stop()
    receiver.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function createPending(service: RunningService, scope: { projectId: string; plan: 'pro' }, count: number): Promise<string[]> {
  const uuids: string[] = []
  for (let i = 0; i < count; i++) uuids.push((await service.ctx.payloads.create(scope, { type: 'connect' })).uuid)
  return uuids
}

/** POSTs `body` as JSON through `agent`; resolves with the status and the answer's text. */
function post(agent: http.Agent, url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/**
 * When each payload's delivery row was written: the instant the webhook service gives it inside the event's transaction,
 * in whole milliseconds, so that it is at most a millisecond after the commit it precedes.
 */
async function deliveriesQueuedAt(url: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ payload_uuid: string; created_at: string }>(
      'select payload_uuid, created_at from webhook_deliveries',
    )
    return new Map(rows.map((row) => [row.payload_uuid, Number(row.created_at)]))
  } finally {
    await client.end()
  }
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!
}

async function startReceiver(): Promise<Receiver> {
  const child = fork(new URL('./webhook-receiver.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port))
    child.once('exit', (code) => reject(new Error(`the webhook receiver exited with ${code}`)))
  })
  return {
    url: `http://127.0.0.1:${port}/hook`,
    pid: child.pid!,
    receipts: (count) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the receiver got fewer than ${count} deliveries within ${RECEIPT_TIMEOUT_MS} ms`)),
          RECEIPT_TIMEOUT_MS,
        )
        child.once('message', (message: { receivedAtMs: [string, number][]; duplicates: number }) => {
          clearTimeout(timer)
          resolve({ at: new Map(message.receivedAtMs), duplicates: message.duplicates })
        })
        child.send({ awaitCount: count })
      }),
    close: () => {
      // A receiver that crashed has no channel left to close; its exit is what the run reports.
      if (child.connected) child.disconnect()
    },
  }
}

const POSTGRES_INSTANCES = 3

/**
 * Three `countersign serve` processes on one PostgreSQL database, each with its dispatcher, one webhook, the receiver in
 * its own process. Events are rejections sent over HTTP at a steady rate, round-robin to the instances, as wallets'
 * browsers would send them; each instance's dispatcher is woken by its own commits. Latency is measured from the send
 * of the request that commits the event (the commit is a little later), so it is an upper bound.
 */
export async function benchWebhooksPostgres(
  quick = false,
  eventsPerSecond = LIVE_EVENTS_PER_SECOND,
  redisUrl?: string,
): Promise<{ text: string; goals: Goal[] }> {
  const events = quick ? QUICK_EVENTS : ALL_EVENTS
  const database = await createTestDatabase('postgres')
  const receiver = await startReceiver()
  const env = {
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LIMITS_PRO: '{"monthlyPayloads": 100000000, "requestsPerMinute": 100000000}',
    ...(redisUrl && { REDIS_URL: redisUrl }),
  }
  const servers: Awaited<ReturnType<typeof startProcess>>[] = []
  try {
    const project = JSON.parse(
      execFileSync(process.execPath, ['dist/cli.js', 'project', 'create', '--name', 'bench', '--plan', 'pro', '--json'], {
        env: { ...process.env, ...env },
      }).toString(),
    ) as { apiKey: string }
    for (let i = 0; i < POSTGRES_INSTANCES; i++) {
      servers.push(await startProcess(['bin/countersign.js', 'serve'], env, /listening on http:\/\/127\.0\.0\.1:(\d+)/))
    }
    const bases = servers.map((server) => `http://127.0.0.1:${server.match[1]}/api/v1`)
    const headers = { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' }
    const hook = await fetch(`${bases[0]}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url }) })
    if (hook.status !== 201) throw new Error(`creating the webhook answered ${hook.status}: ${await hook.text()}`)
    const warmUpEvents = Number(process.env.BENCH_WEBHOOK_WARM_UP ?? (quick ? QUICK_WARM_UP_EVENTS : WARM_UP_EVENTS))
    if (!Number.isInteger(warmUpEvents) || warmUpEvents < 0) throw new Error('BENCH_WEBHOOK_WARM_UP takes a whole number, 0 or more')
    const uuids: string[] = []
    while (uuids.length < warmUpEvents + events) {
      const created = await Promise.all(
        Array.from({ length: Math.min(50, warmUpEvents + events - uuids.length) }, async (_, i) => {
          const response = await fetch(`${bases[i % bases.length]}/payloads`, { method: 'POST', headers, body: '{"type":"connect"}' })
          return ((await response.json()) as { uuid: string }).uuid
        }),
      )
      uuids.push(...created)
    }

    // Kept-alive connections through node:http, as wallets' browsers keep theirs: fetch cost this process 300 to 500 µs a
    // request, processor time taken from the service on the same two cores.
    const agent = new http.Agent({ keepAlive: true })
    /**
     * Rejects the payloads at the offered rate, round-robin to the instances, noting when each was sent; resolves once
     * every answer is in, with how many were refused or failed, by what they answered.
     */
    const rejectAtRate = async (payloads: readonly string[], sentAtMs: Map<string, number>) => {
      const refusals = new Map<string, number>()
      const note = (status: string) => refusals.set(status, (refusals.get(status) ?? 0) + 1)
      const inFlight = new Set<Promise<void>>()
      const startMs = nowMs()
      let sent = 0
      while (sent < payloads.length) {
        const due = Math.min(payloads.length, Math.floor(((nowMs() - startMs) / 1000) * eventsPerSecond) + 1)
        while (sent < due) {
          const uuid = payloads[sent]!
          const base = bases[sent % bases.length]!
          sent++
          sentAtMs.set(uuid, nowMs())
          const request = post(agent, `${base}/sign/${uuid}/reject`, '{}')
            .then(({ status, body }) => {
              if (status !== 200) note(`${status} ${body.slice(0, 120)}`)
            })
            .catch((error: unknown) => {
              note(String(error instanceof Error ? error.message : error))
            })
            .finally(() => inFlight.delete(request))
          inFlight.add(request)
        }
        await sleep(1)
      }
      await Promise.all(inFlight)
      return refusals
    }
    const total = (refusals: Map<string, number>) => [...refusals.values()].reduce((sum, n) => sum + n, 0)
    // A warm-up at the same rate, as the HTTP parts warm up: the measured events find the instances' code compiled, as
    // in a service that has been running, not its first seconds of rejections and deliveries.
    const warmUpRefusals = await rejectAtRate(uuids.slice(0, warmUpEvents), new Map())
    const warmUpRefused = total(warmUpRefusals)
    const { at: warmedUp } = await receiver.receipts(warmUpEvents - warmUpRefused)
    const measured = uuids.slice(warmUpEvents)
    const sentAtMs = new Map<string, number>()
    const serverPids = servers.map((server) => server.child.pid!)
    const machineBefore = processorTicks()
    const serversBefore = processTicks(serverPids)
    const postgresBefore = commandTicks('postgres')
    const redisBefore = commandTicks('redis-server')
    const receiverBefore = processTicks([receiver.pid])
    const generatorBefore = process.cpuUsage()
    const startMs = nowMs()
    const refusals = await rejectAtRate(measured, sentAtMs)
    const refused = total(refusals)
    agent.destroy()
    const committedPerSecond = events / ((nowMs() - startMs) / 1000)
    // The measured deliveries, however many of the warm-up's (a refused request may still have committed) arrive late.
    const awaited = events - refused
    let { at: received, duplicates } = await receiver.receipts(warmedUp.size + awaited)
    let at = new Map([...received].filter(([uuid]) => sentAtMs.has(uuid)))
    while (at.size < awaited) {
      ;({ at: received, duplicates } = await receiver.receipts(received.size + awaited - at.size))
      at = new Map([...received].filter(([uuid]) => sentAtMs.has(uuid)))
    }
    const machineBusy = busyBetween(machineBefore, processorTicks())
    const serversAfter = processTicks(serverPids)
    const postgresUsed = ticksSince(postgresBefore, commandTicks('postgres'))
    // A Redis elsewhere (another host, a container) has no process here to read: n/a, not 0.
    const redisUsed = redisBefore?.size ? ticksSince(redisBefore, commandTicks('redis-server')) : undefined
    const receiverAfter = processTicks([receiver.pid])
    const perEvent = (ticks: number | undefined) =>
      ticks === undefined ? 'n/a' : `${Math.round((ticks / TICKS_PER_SECOND / events) * 1e6)} µs`
    const generator = process.cpuUsage(generatorBefore)
    const deliveredSeconds = (Math.max(...at.values()) - startMs) / 1000
    const latenciesMs = [...at].map(([uuid, receivedAtMs]) => receivedAtMs - sentAtMs.get(uuid)!).sort((a, b) => a - b)
    const queuedAtMs = await deliveriesQueuedAt(database.url)
    const fromQueuedMs = [...at].map(([uuid, receivedAtMs]) => receivedAtMs - queuedAtMs.get(uuid)!).sort((a, b) => a - b)
    const deliveriesPerSecond = at.size / deliveredSeconds
    const p99 = percentile(latenciesMs, 0.99)
    const fromQueuedP99 = percentile(fromQueuedMs, 0.99)
    const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
    const ms = (value: number) => `${value.toFixed(1)} ms`
    const listed = (answers: Map<string, number>) =>
      answers.size > 0 ? `: ${[...answers].map(([what, n]) => `${n} × ${what}`).join('; ')}` : ''
    const text = [
      `### Webhook deliveries on PostgreSQL, ${POSTGRES_INSTANCES} instances, ${redisUrl ? 'with Redis' : 'without Redis'}`,
      '',
      `${count.format(events)} rejections sent over HTTP at ${count.format(eventsPerSecond)} a second, round-robin to the instances, after ${count.format(warmUpEvents)} more sent the same way and delivered to warm the instances up; one webhook; the receiver in its own process.`,
      'Latency is from the send of the request that commits the event to the receipt of its delivery (an upper bound of commit to receipt).',
      '',
      '| measure | result | target |',
      '| --- | --- | --- |',
      `| events committed per second | ${count.format(committedPerSecond)} | |`,
      `| requests refused or failed | ${refused}${listed(refusals)} | 0 |`,
      `| warm-up requests refused or failed | ${warmUpRefused}${listed(warmUpRefusals)} | 0 |`,
      `| deliveries per second | ${count.format(deliveriesPerSecond)} | >= 1,000 |`,
      `| request to receipt, p50 | ${ms(percentile(latenciesMs, 0.5))} | |`,
      `| request to receipt, p99 | ${ms(p99)} | |`,
      `| request to receipt, max | ${ms(latenciesMs.at(-1)!)} | |`,
      `| delivery written (in the event's transaction) to receipt, p50 | ${ms(percentile(fromQueuedMs, 0.5))} | |`,
      `| delivery written (in the event's transaction) to receipt, p99 | ${ms(fromQueuedP99)} | < 100 ms |`,
      `| deliveries received twice | ${duplicates} | 0 |`,
      `| machine busy (both cores, anyone), first request to last receipt | ${machineBusy === undefined ? 'n/a' : `${Math.round(machineBusy * 100)}%`} | |`,
      `| the instances' processor time an event (request, transition, delivery) | ${perEvent(serversBefore === undefined || serversAfter === undefined ? undefined : serversAfter - serversBefore)} | |`,
      `| PostgreSQL's processor time an event (all its processes) | ${perEvent(postgresUsed)} | |`,
      ...(redisUrl ? [`| Redis's processor time an event | ${perEvent(redisUsed)} | |`] : []),
      `| the receiver's processor time an event | ${perEvent(receiverBefore === undefined || receiverAfter === undefined ? undefined : receiverAfter - receiverBefore)} | |`,
      `| the load generator's processor time a request (this process: node:http) | ${Math.round((generator.user + generator.system) / events)} µs | |`,
    ].join('\n')
    return {
      text,
      goals: [
        {
          goal: `Webhooks on PostgreSQL, ${POSTGRES_INSTANCES} instances: at least 1,000 deliveries/s live, p99 from commit to receipt under 100 ms, none twice`,
          measured: `${count.format(deliveriesPerSecond)}/s, p99 ${ms(fromQueuedP99)} from the delivery's write (${ms(p99)} from the request), ${duplicates} twice, ${refused + warmUpRefused} requests refused`,
          met: deliveriesPerSecond >= 1000 && fromQueuedP99 < 100 && duplicates === 0 && refused + warmUpRefused === 0,
        },
      ],
    }
  } finally {
    await Promise.all(servers.map((server) => stopProcess(server.child)))
    receiver.close()
    await database.drop()
  }
}
