// The service's parts, built once per process from configuration and shared by the HTTP app and the workers.
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { ServiceEvents, wireEvents } from './events.js'
import { OidcSignIn } from './features/accounts/oidc-sign-in.js'
import { AccountService } from './features/accounts/service.js'
import { SessionService } from './features/accounts/sessions.js'
import { EmailOutbox } from './features/email/service.js'
import { createLiveEvents, type LiveEvents } from './features/payloads/live/live-events.js'
import { MemoryStreamSlots, RedisStreamSlots, type StreamSlots } from './features/payloads/live/stream-slots.js'
import { PayloadService } from './features/payloads/service.js'
import { AccountProjects } from './features/projects/account-projects.js'
import { ApiKeyAuthenticator } from './features/projects/api-key-authenticator.js'
import { ProjectService } from './features/projects/service.js'
import { multisignPreparer } from './features/signing/multisign/prepare.js'
import { SigningService } from './features/signing/service.js'
import { TransactionFollower } from './features/signing/transaction-follower.js'
import { createXamanClient } from './features/signing/xaman/xaman-client.js'
import { WebhookService } from './features/webhooks/service.js'
import type { Clock } from './platform/clock.js'
import { createSecretBox, type SecretBox } from './platform/crypto/secret-box.js'
import type { Storage } from './platform/db/database.js'
import { MemoryRateLimiter } from './platform/rate-limit/memory-rate-limiter.js'
import type { RateLimiter } from './platform/rate-limit/rate-limiter.js'
import { RedisRateLimiter } from './platform/rate-limit/redis-rate-limiter.js'
import { createXrplNode, type XrplNode } from './platform/xrpl/xrpl-node.js'

export interface ServiceContext {
  config: Config
  storage: Storage
  clock: Clock
  logger: Logger
  /** The service's events and their listeners (events.ts). */
  events: ServiceEvents
  /** SESSION_SECRET, or the secret generated on first start: signs sessions, seals webhook secrets. */
  serverSecret: string
  /** Seals webhook secrets at rest, under a key derived from serverSecret: the webhook service and the dispatcher share it. */
  secretBox: SecretBox
  /** Request rates per project and poll intervals per payload; keys are prefixed by what they count. */
  rateLimiter: RateLimiter
  authenticator: ApiKeyAuthenticator
  payloads: PayloadService
  projects: ProjectService
  /** Webhooks of a project (API-key and dashboard routes), and the outbox of their deliveries. */
  webhooks: WebhookService
  /** The outbox of the service's emails (usage warnings, webhook failure alerts). */
  emails: EmailOutbox
  /** Dashboard accounts, sessions and sign-in; `oidc` is undefined when OIDC is not configured (local admin links instead). */
  accounts: AccountService
  sessions: SessionService
  oidc: OidcSignIn | undefined
  /** The project endpoints' view: an account's own projects only. */
  accountProjects: AccountProjects
  /** The XRPL node client (XRPL_NODE_URL), connected on first use; undefined when not configured. */
  xrplNode: XrplNode | undefined
  /** The wallet-facing side of payloads: the signing page's reads, approvals and rejections. */
  signing: SigningService
  /** Follows submitted transactions to their final outcome (the transaction-follower worker runs it). */
  follower: TransactionFollower
  /** Payload changes for live streams, across instances through Redis when REDIS_URL is set. */
  liveEvents: LiveEvents
  /** Open live streams per project and per payload, for their caps; in Redis when REDIS_URL is set. */
  streamSlots: StreamSlots
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
  const secretBox = createSecretBox(options.serverSecret)
  const events = new ServiceEvents()
  const authenticator = new ApiKeyAuthenticator(db, clock, (error) => logger.warn({ err: error }, 'could not record API key use'))
  const xrplNode = config.xrplNodeUrl ? createXrplNode(config.xrplNodeUrl) : undefined
  const payloads = new PayloadService({
    db,
    dialect: storage.dialect,
    clock,
    events,
    signingOrigin: config.signingUrl,
    network: config.xrplNetwork,
    limits: config.limits,
    prepareMultisign: multisignPreparer(xrplNode, logger),
    canSubmit: xrplNode !== undefined,
    onUsageWarningError: (error) => logger.warn({ err: error }, 'could not record the monthly usage warning'),
  })
  const projects = new ProjectService(db, clock, events)
  const rateLimiter =
    options.rateLimiter ??
    (config.redisUrl ? new RedisRateLimiter({ redisUrl: config.redisUrl, clock, logger }) : new MemoryRateLimiter(clock))
  const webhooks = new WebhookService({
    db,
    dialect: storage.dialect,
    clock,
    events,
    secretBox,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
  })
  const emails = new EmailOutbox({ db, clock, publicUrl: config.publicUrl })
  const follower = new TransactionFollower({ db, dialect: storage.dialect, clock, payloads, xrplNode, logger })
  const liveEvents = createLiveEvents(config.redisUrl, logger)
  wireEvents({ events, webhooks, follower, emails, liveEvents, logger })
  // A lease outlives a few missed heartbeats, so that only a stream whose instance is gone loses its slot.
  const streamSlots = config.redisUrl
    ? new RedisStreamSlots(config.redisUrl, { clock, leaseMs: config.liveHeartbeatMs * 4, logger })
    : new MemoryStreamSlots()
  return {
    config,
    storage,
    clock,
    logger,
    events,
    serverSecret: options.serverSecret,
    secretBox,
    rateLimiter,
    authenticator,
    payloads,
    projects,
    webhooks,
    emails,
    accounts: new AccountService(db, clock),
    sessions: new SessionService(db, clock),
    oidc: config.oidc ? new OidcSignIn(config.oidc, `${config.publicUrl}/auth/callback`, logger) : undefined,
    accountProjects: new AccountProjects({
      db,
      clock,
      projects,
      payloads,
      authenticator,
      limits: config.limits,
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      dialect: storage.dialect,
      projectsPerAccount: config.projectsPerAccount,
      rateLimiter,
    }),
    xrplNode,
    signing: new SigningService({
      db,
      clock,
      payloads,
      network: config.xrplNetwork,
      explorerTemplate: config.xrplExplorerUrl,
      xrplNode,
      dialect: storage.dialect,
      xaman: config.xaman ? createXamanClient(config.xaman) : undefined,
      logger,
    }),
    follower,
    liveEvents,
    streamSlots,
  }
}
