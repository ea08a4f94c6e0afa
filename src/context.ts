// The service's parts, built once per process from configuration and shared by the HTTP app and the workers.
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Clock } from './domain/clock.js'
import { MemoryRateLimiter } from './rate-limit/memory-rate-limiter.js'
import type { RateLimiter } from './rate-limit/rate-limiter.js'
import { ApiKeyAuthenticator } from './services/api-key-authenticator.js'
import { PayloadService } from './services/payloads.js'
import { ProjectService } from './services/projects.js'
import type { Storage } from './storage/database.js'

export interface ServiceContext {
  config: Config
  storage: Storage
  clock: Clock
  logger: Logger
  /** SESSION_SECRET, or the secret generated on first start: signs sessions, seals webhook secrets. */
  serverSecret: string
  /** Request rates per project and poll intervals per payload; keys are prefixed by what they count. */
  rateLimiter: RateLimiter
  authenticator: ApiKeyAuthenticator
  payloads: PayloadService
  projects: ProjectService
}

export interface ContextOptions {
  config: Config
  storage: Storage
  clock: Clock
  logger: Logger
  serverSecret: string
  rateLimiter?: RateLimiter
}

export function createContext(options: ContextOptions): ServiceContext {
  const { config, storage, clock, logger } = options
  const db = storage.db
  return {
    config,
    storage,
    clock,
    logger,
    serverSecret: options.serverSecret,
    rateLimiter: options.rateLimiter ?? new MemoryRateLimiter(clock),
    authenticator: new ApiKeyAuthenticator(db, clock, (error) => logger.warn({ err: error }, 'could not record API key use')),
    payloads: new PayloadService({ db, clock, publicUrl: config.publicUrl, network: config.xrplNetwork, limits: config.limits }),
    projects: new ProjectService(db, clock),
  }
}
