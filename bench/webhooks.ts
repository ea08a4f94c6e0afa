// Webhook delivery benchmark: the embedded SQLite service in this process, its receiver in another (as an application's
// server is). Measures deliveries per second and the time from an event's commit to its receipt, while events stream in
// and when a backlog drains.
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../src/config.js'
import { startWebhookDispatcher } from '../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { type RunningService, startService } from '../src/main.js'
import { createLogger } from '../src/platform/logger.js'

const EVENTS = 5_000
/** The rate events are committed at in the live run: the rate the service is meant to deliver at. */
const LIVE_EVENTS_PER_SECOND = 1_200
const RECEIPT_TIMEOUT_MS = 120_000

/** Milliseconds since the epoch, with sub-millisecond precision: comparable with the receiver's. */
const nowMs = () => performance.timeOrigin + performance.now()

interface Receiver {
  url: string
  /** When each payload's delivery arrived (nowMs), once `count` deliveries have. */
  receipts(count: number): Promise<Map<string, number>>
  close(): void
}

export async function benchWebhooks(): Promise<string> {
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
    const liveReceipts = await receiver.receipts(EVENTS)
    const liveSeconds = (Math.max(...live.map((uuid) => liveReceipts.get(uuid)!)) - liveStartMs) / 1000
    const latenciesMs = live.map((uuid) => liveReceipts.get(uuid)! - committedAtMs.get(uuid)!).sort((a, b) => a - b)
    await dispatcher.stop()

    // Backlog: the events are committed with no dispatcher running (a restart, or a receiver that was down), then drained.
    const backlog = await createPending(service, scope, EVENTS)
    for (const uuid of backlog) await service.ctx.payloads.reject(uuid, 'bench')
    const drainStartMs = nowMs()
    dispatcher = startWebhookDispatcher(service.ctx)
    const drainReceipts = await receiver.receipts(2 * EVENTS)
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
    receipts: (count) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the receiver got fewer than ${count} deliveries within ${RECEIPT_TIMEOUT_MS} ms`)),
          RECEIPT_TIMEOUT_MS,
        )
        child.once('message', (message: { receivedAtMs: [string, number][] }) => {
          clearTimeout(timer)
          resolve(new Map(message.receivedAtMs))
        })
        child.send({ awaitCount: count })
      }),
    close: () => {
      // A receiver that crashed has no channel left to close; its exit is what the run reports.
      if (child.connected) child.disconnect()
    },
  }
}
