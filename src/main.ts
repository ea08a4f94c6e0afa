// Process assembly: config -> storage -> migrations -> services -> HTTP app -> workers -> listen; and a graceful stop.
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { createContext, type ServiceContext } from './context.js'
import { startMailer } from './features/email/mailer.js'
import { startExpirySweeper } from './features/payloads/expiry-worker.js'
import { startTransactionFollower } from './features/signing/follower-worker.js'
import { startXamanOutcomeWorker } from './features/signing/xaman/outcome-worker.js'
import { startWebhookDispatcher } from './features/webhooks/dispatcher/start-webhook-dispatcher.js'
import { openServerSecret } from './features/webhooks/rotate-server-secret.js'
import { type Clock, systemClock } from './platform/clock.js'
import { openStorage } from './platform/db/database.js'
import { migrateToLatest } from './platform/db/migrations.js'
import { GENERATED_SECRET_KEY, settingsRepository } from './platform/db/settings-repository.js'
import { startIdempotencyKeySweeper } from './platform/http/idempotency-sweeper.js'
import { createMetrics, listenForMetrics, type MetricsListener } from './platform/http/metrics.js'
import { createLogger } from './platform/logger.js'
import type { PeriodicTask } from './platform/periodic-task.js'
import type { RateLimiter } from './platform/rate-limit/rate-limiter.js'

export interface RunningService {
  ctx: ServiceContext
  app: FastifyInstance
  /** Base URL the server listens on, e.g. http://127.0.0.1:3000 (undefined when not listening). */
  url: string | undefined
  /** Base URL of the metrics listener (METRICS_PORT); undefined without one or when not listening. */
  metricsUrl: string | undefined
  stop(): Promise<void>
}

export interface StartOptions {
  clock?: Clock
  logger?: Logger
  rateLimiter?: RateLimiter
  /** Listen on config.host:config.port (default true); tests may use app.inject() instead. */
  listen?: boolean
  /** Run background workers (default true); tests drive them by hand with a manual clock. */
  workers?: boolean
}

export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger = options.logger ?? createLogger(config.logLevel)
  const storage = openStorage(config.databaseUrl)
  let serverSecret: string
  try {
    await migrateToLatest(storage)
    serverSecret = await openServerSecret(storage.db, config.sessionSecret)
    if (config.sessionSecret !== undefined && (await settingsRepository.get(storage.db, GENERATED_SECRET_KEY)) !== undefined) {
      logger.warn(
        'SESSION_SECRET is set, but the database still holds the secret generated before it: older webhook secrets sealed under that one fail until `countersign rotate-secret` re-seals them and removes it (docs/deployment.md)',
      )
    }
  } catch (error) {
    await storage.close()
    throw error
  }
  const ctx = createContext({
    config,
    storage,
    clock: options.clock ?? systemClock,
    logger,
    serverSecret,
    rateLimiter: options.rateLimiter,
  })
  const metrics = createMetrics()
  const app = await buildApp(ctx, metrics)
  // The mailer starts first: a malformed SMTP_URL fails it before any other worker runs.
  const workers: PeriodicTask[] =
    options.workers === false
      ? []
      : [
          startMailer(ctx),
          startExpirySweeper(ctx),
          startWebhookDispatcher(ctx),
          startIdempotencyKeySweeper(ctx),
          startTransactionFollower(ctx),
          ...(ctx.signing.xamanEnabled ? [startXamanOutcomeWorker(ctx.signing.xamanOutcomes, ctx.logger)] : []),
        ]

  let url: string | undefined
  let metricsListener: MetricsListener | undefined
  if (options.listen !== false) {
    await app.listen({ port: config.port, host: config.host })
    if (config.metrics.port !== undefined)
      metricsListener = await listenForMetrics(metrics, { ...config.metrics, port: config.metrics.port })
    const address = app.server.address()
    if (address && typeof address === 'object')
      url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  } else {
    await app.ready()
  }

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(workers.map((w) => w.stop()))
      await app.close()
      await metricsListener?.close()
      await ctx.xrplNode?.close()
      await ctx.rateLimiter.close()
      await Promise.all([ctx.liveEvents.close(), ctx.streamSlots.close()])
      await storage.close()
    })()
    return stopping
  }
  return { ctx, app, url, metricsUrl: metricsListener?.url, stop }
}
