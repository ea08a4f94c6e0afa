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
import { openStorage, type Storage } from './platform/db/database.js'
import { migrateToLatest } from './platform/db/migrations.js'
import { GENERATED_SECRET_KEY, settingsRepository } from './platform/db/settings-repository.js'
import { isOpenError } from './platform/db/unavailable.js'
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

/** A start that failed for a reason the operator fixes in the settings it names: said in a sentence, without a stack. */
export class StartError extends Error {
  override name = 'StartError'
}

/** Why a listen failed, for the errors that are the settings' and not the service's. */
const LISTEN_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is in use (another process listens there)',
  EACCES: 'not allowed (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: "the address is not one of this machine's",
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved',
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
  const storage = await openMigratedDatabase(config.databaseUrl)
  let serverSecret: string
  try {
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
  const workers: PeriodicTask[] = []
  let app: FastifyInstance | undefined
  let metricsListener: MetricsListener | undefined
  let stopping: Promise<void> | undefined
  // Also what a start that fails ends with: whatever it had opened is closed, so that the process exits.
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(workers.map((w) => w.stop()))
      await app?.close()
      await metricsListener?.close()
      await ctx.xrplNode?.close()
      await ctx.rateLimiter.close()
      await Promise.all([ctx.liveEvents.close(), ctx.streamSlots.close()])
      await storage.close()
    })()
    return stopping
  }

  let url: string | undefined
  try {
    app = await buildApp(ctx, metrics)
    if (options.listen !== false) {
      await listenOn(() => app?.listen({ port: config.port, host: config.host }), 'HOST and PORT', `${config.host}:${config.port}`)
      const metricsPort = config.metrics.port
      if (metricsPort !== undefined) {
        metricsListener = await listenOn(
          () => listenForMetrics(metrics, { ...config.metrics, port: metricsPort }),
          'METRICS_HOST and METRICS_PORT',
          `${config.metrics.host}:${metricsPort}`,
        )
      }
      const address = app.server.address()
      if (address && typeof address === 'object')
        url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
    } else {
      await app.ready()
    }
    // The workers start once the instance serves: one that cannot listen does no background work either.
    if (options.workers !== false) {
      // The mailer starts first: a malformed SMTP_URL fails it before any other worker runs.
      workers.push(startMailer(ctx), startExpirySweeper(ctx), startWebhookDispatcher(ctx), startIdempotencyKeySweeper(ctx))
      workers.push(startTransactionFollower(ctx))
      if (ctx.signing.xamanEnabled) workers.push(startXamanOutcomeWorker(ctx.signing.xamanOutcomes, ctx.logger))
    }
  } catch (error) {
    await stop().catch((closing: unknown) => logger.warn({ err: closing }, 'could not close everything after a failed start'))
    throw error
  }
  // Built in the try above, which throws when it could not be.
  return { ctx, app: app as FastifyInstance, url, metricsUrl: metricsListener?.url, stop }
}

/**
 * Opens DATABASE_URL's database and migrates it to this release. A database that cannot be opened or reached (a path
 * SQLite cannot open, a host that refuses or does not resolve, an unknown database, role or password: the migration's
 * statements are the first on it) is a start-up error naming the setting; the driver's message says why, and never
 * holds the URL (nor its password).
 */
export async function openMigratedDatabase(databaseUrl: string): Promise<Storage> {
  let storage: Storage | undefined
  try {
    storage = openStorage(databaseUrl)
    await migrateToLatest(storage)
    return storage
  } catch (error) {
    await storage?.close()
    if (!isOpenError(error)) throw error
    throw new StartError(`cannot open the database: ${(error as Error).message}; check DATABASE_URL`)
  }
}

/** A listen that fails for want of the address (in use, not allowed, not this machine's) as a start-up error naming its settings. */
async function listenOn<T>(listen: () => Promise<T> | undefined, settings: string, address: string): Promise<T> {
  try {
    return (await listen()) as T
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const why = LISTEN_ERRORS[String(code)]
    if (why === undefined) throw error
    throw new StartError(`cannot listen on ${address}: ${why}; check ${settings}`)
  }
}
