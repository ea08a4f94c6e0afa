// Webhook delivery benchmark: the embedded SQLite service and a local receiver in one process. Measures deliveries per
// second and the time from an event's commit to its receipt, while events stream in and when a backlog drains.
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../src/config.js'
import { createLogger } from '../src/logger.js'
import { type RunningService, startService } from '../src/main.js'
import type { PayloadTransition } from '../src/services/payloads.js'
import { startWebhookDispatcher } from '../src/workers/webhook-dispatcher.js'

const EVENTS = 5_000
/** The rate events are committed at in the live run: the rate the service is meant to deliver at. */
const LIVE_EVENTS_PER_SECOND = 1_200
const RECEIPT_TIMEOUT_MS = 120_000

interface Receiver {
  url: string
  /** performance.now() at receipt, by payload uuid. */
  receivedAtMs: Map<string, number>
  waitFor(count: number): Promise<void>
  close(): Promise<void>
}

export async function benchWebhooks(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-webhooks-'))
  const receiver = await startReceiver()
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LIMITS_PRO: '{"monthlyPayloads": 100000000, "requestsPerMinute": 100000000}',
  })
  const service = await startService(config, { listen: false, workers: false, logger: createLogger('warn') })
  try {
    const scope = { projectId: (await service.ctx.projects.createProject({ name: 'Bench', plan: 'pro' })).project.id, plan: 'pro' as const }
    await service.ctx.webhooks.create(scope, { url: receiver.url })
    const committedAtMs = new Map<string, number>()
    service.ctx.payloads.events.on('transition', ({ payload }: PayloadTransition) => committedAtMs.set(payload.uuid, performance.now()))

    // Live: events commit at a steady rate, as requests would bring them, while the dispatcher runs.
    const live = await createPending(service, scope, EVENTS)
    let dispatcher = startWebhookDispatcher(service.ctx)
    const liveStartMs = performance.now()
    let resolved = 0
    while (resolved < EVENTS) {
      const dueCount = Math.min(EVENTS, Math.floor(((performance.now() - liveStartMs) / 1000) * LIVE_EVENTS_PER_SECOND) + 1)
      while (resolved < dueCount) {
        await service.ctx.payloads.reject(live[resolved++]!, 'bench')
        // Each resolution is its own request in the service; SQLite answers synchronously, so yield as the server would.
        await setImmediate()
      }
      await sleep(1)
    }
    const eventsPerSecond = EVENTS / ((performance.now() - liveStartMs) / 1000)
    await receiver.waitFor(EVENTS)
    const liveSeconds = (Math.max(...live.map((uuid) => receiver.receivedAtMs.get(uuid)!)) - liveStartMs) / 1000
    const latenciesMs = live.map((uuid) => receiver.receivedAtMs.get(uuid)! - committedAtMs.get(uuid)!).sort((a, b) => a - b)
    await dispatcher.stop()

    // Backlog: the events are committed with no dispatcher running (a restart, or a receiver that was down), then drained.
    const backlog = await createPending(service, scope, EVENTS)
    for (const uuid of backlog) await service.ctx.payloads.reject(uuid, 'bench')
    const drainStartMs = performance.now()
    dispatcher = startWebhookDispatcher(service.ctx)
    await receiver.waitFor(2 * EVENTS)
    const drainSeconds = (performance.now() - drainStartMs) / 1000
    await dispatcher.stop()

    const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
    const ms = (value: number) => `${value.toFixed(1)} ms`
    return [
      '## Webhook deliveries',
      '',
      `Embedded SQLite, one process, one webhook, a receiver on 127.0.0.1 answering 204; ${count.format(EVENTS)} events each run.`,
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
      '',
    ].join('\n')
  } finally {
    await service.stop()
    await receiver.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function createPending(service: RunningService, scope: { projectId: string; plan: 'pro' }, count: number): Promise<string[]> {
  const uuids: string[] = []
  for (let i = 0; i < count; i++) uuids.push((await service.ctx.payloads.create(scope, { type: 'connect' })).uuid)
  return uuids
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!
}

async function startReceiver(): Promise<Receiver> {
  const receivedAtMs = new Map<string, number>()
  let waiting: { count: number; resolve: () => void } | undefined
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload: { uuid: string } }
      receivedAtMs.set(body.payload.uuid, performance.now())
      res.writeHead(204).end()
      if (waiting && receivedAtMs.size >= waiting.count) waiting.resolve()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    receivedAtMs,
    waitFor(count) {
      if (receivedAtMs.size >= count) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receivedAtMs.size} of ${count} deliveries within ${RECEIPT_TIMEOUT_MS} ms`)),
          RECEIPT_TIMEOUT_MS,
        )
        waiting = {
          count,
          resolve: () => {
            clearTimeout(timer)
            waiting = undefined
            resolve()
          },
        }
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
