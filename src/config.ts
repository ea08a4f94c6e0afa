// Every environment variable the service reads, parsed and validated in one place.
import { isIP } from 'node:net'
import type { PlanLimits, PlanName } from './features/projects/plans.js'
import { DEFAULT_PLAN_LIMITS } from './features/projects/plans.js'

export interface Config {
  port: number
  host: string
  publicUrl: string
  /**
   * SIGNING_URL: the origin of the signing pages (signingUrl, the connect challenge's domain); PUBLIC_URL's unless the
   * operator gives them a host of their own, away from the dashboard's session (docs/deployment.md).
   */
  signingUrl: string
  databaseUrl: string
  redisUrl: string | undefined
  /** LIVE_HEARTBEAT_MS: how often an open live stream sends a comment line, so that proxies keep it open. */
  liveHeartbeatMs: number
  /**
   * REQUEST_TIMEOUT_MS: the time a client has to send a whole request, headers and body; past it the connection is
   * answered 408 and closed, so that requests trickled in a byte at a time cannot hold connections open.
   */
  requestTimeoutMs: number
  /**
   * allowedEmailDomains (OIDC_ALLOWED_EMAIL_DOMAINS, lower-cased): when set, only an account whose provider vouches
   * for an address at one of them signs in; unset, every account of the issuer may.
   */
  oidc:
    | {
        issuer: string
        clientId: string
        clientSecret: string
        tokenAuthMethod: 'client_secret_basic' | 'client_secret_post'
        allowedEmailDomains: readonly string[] | undefined
      }
    | undefined
  /**
   * PROJECTS_PER_ACCOUNT: the most projects an account may have when it creates one in the dashboard; those the
   * command line made for the local admin count, though the command line itself is not held to it.
   */
  projectsPerAccount: number
  /** NODE_ENV=production: SESSION_SECRET is required, and the one-time sign-in link is never printed. */
  production: boolean
  /** SESSION_SECRET, at least 32 bytes; required in production, generated into the database otherwise. */
  sessionSecret: string | undefined
  /** OLD_SESSION_SECRET: what `countersign rotate-secret` re-seals from; the generated one in the database when unset. */
  oldSessionSecret: string | undefined
  smtpUrl: string | undefined
  emailFrom: string
  xrplNodeUrl: string | undefined
  /** XRPL_NETWORK, lower-cased: "mainnet" turns off the developer wallet however the operator spelled it. */
  xrplNetwork: string
  /** XRPL_EXPLORER_URL: a transaction's page, with {txHash}; by default the XRPL explorer of mainnet, testnet or devnet. */
  xrplExplorerUrl: string | undefined
  webhookAllowPrivateTargets: boolean
  /** AUTH_FAILURES_PER_MINUTE: failed API-key authentications a client address may make per minute before 429s. */
  authFailuresPerMinute: number
  /**
   * TRUST_PROXY: the proxies whose X-Forwarded-For names the client address (Fastify's trustProxy), a comma-separated
   * list of addresses and CIDR ranges; false: the socket's peer is the client.
   */
  trustProxy: false | string
  /**
   * Where Prometheus metrics are served: METRICS_TOKEN requires `Authorization: Bearer <token>`; METRICS_PORT serves
   * them on a listener of their own (METRICS_HOST, default 127.0.0.1) and not on the public one. Neither: not served.
   */
  metrics: { token: string | undefined; host: string; port: number | undefined }
  logLevel: LogLevel
  limits: Record<PlanName, PlanLimits>
  /** The Xaman platform API (XAMAN_API_KEY, XAMAN_API_SECRET); apiUrl is XAMAN_API_URL, default https://xumm.app. */
  xaman: { apiKey: string; apiSecret: string; apiUrl: string } | undefined
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** pino's levels; pino throws its own stack trace at an unknown one, so it is checked here first. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

type Env = Record<string, string | undefined>

/** Refuses any of `dependents` set (not empty) while `required` is unset. */
function refuseWithout(env: Env, required: string, dependents: string[]): void {
  if (nonEmpty(env[required]) !== undefined) return
  const set = dependents.filter((name) => nonEmpty(env[name]) !== undefined)
  if (set.length > 0)
    throw new ConfigError(
      `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set without ${required}, which ${set.length === 1 ? 'it needs' : 'they need'}`,
    )
}

export function loadConfig(env: Env = process.env): Config {
  const port = parsePort('PORT', nonEmpty(env.PORT) ?? '3000')
  const publicUrl = parseOrigin('PUBLIC_URL', env.PUBLIC_URL ?? `http://localhost:${port}`)
  const signingUrl = parseSigningUrl(nonEmpty(env.SIGNING_URL), publicUrl)
  const oidcIssuer = env.OIDC_ISSUER
  const tokenAuthMethod = env.OIDC_TOKEN_AUTH_METHOD ?? 'client_secret_basic'
  if (tokenAuthMethod !== 'client_secret_basic' && tokenAuthMethod !== 'client_secret_post') {
    throw new ConfigError('OIDC_TOKEN_AUTH_METHOD must be client_secret_basic or client_secret_post')
  }
  if (oidcIssuer && (!env.OIDC_CLIENT_ID || !env.OIDC_CLIENT_SECRET)) {
    throw new ConfigError('OIDC_ISSUER is set: OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required too')
  }
  // A setting that only means something beside another is refused without it, rather than ignored: a misspelt
  // OIDC_ISSUER would otherwise leave the dashboard without the sign-in its operator configured, with no word said.
  refuseWithout(env, 'OIDC_ISSUER', ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_TOKEN_AUTH_METHOD', 'OIDC_ALLOWED_EMAIL_DOMAINS'])
  refuseWithout(env, 'XAMAN_API_KEY', ['XAMAN_API_SECRET', 'XAMAN_API_URL'])
  const production = env.NODE_ENV === 'production'
  const sessionSecret = parseSessionSecret('SESSION_SECRET', nonEmpty(env.SESSION_SECRET))
  if (production && sessionSecret === undefined) {
    throw new ConfigError(
      'SESSION_SECRET is required when NODE_ENV=production: set it to at least 32 random bytes (e.g. `openssl rand -base64 48`) kept outside the database; see docs/deployment.md',
    )
  }
  if (env.XAMAN_API_KEY && !env.XAMAN_API_SECRET) {
    throw new ConfigError('XAMAN_API_KEY is set: XAMAN_API_SECRET is required too')
  }
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    publicUrl,
    signingUrl,
    databaseUrl: parseDatabaseUrl(env.DATABASE_URL ?? 'sqlite:./data/countersign.db'),
    redisUrl: parseRedisUrl(nonEmpty(env.REDIS_URL)),
    liveHeartbeatMs: parsePositiveInteger('LIVE_HEARTBEAT_MS', env.LIVE_HEARTBEAT_MS ?? '15000'),
    requestTimeoutMs: parsePositiveInteger('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS ?? '30000'),
    oidc: oidcIssuer
      ? {
          issuer: oidcIssuer,
          clientId: env.OIDC_CLIENT_ID as string,
          clientSecret: env.OIDC_CLIENT_SECRET as string,
          tokenAuthMethod,
          allowedEmailDomains: parseEmailDomains('OIDC_ALLOWED_EMAIL_DOMAINS', nonEmpty(env.OIDC_ALLOWED_EMAIL_DOMAINS)),
        }
      : undefined,
    projectsPerAccount: parsePositiveInteger('PROJECTS_PER_ACCOUNT', env.PROJECTS_PER_ACCOUNT ?? '20'),
    production,
    sessionSecret,
    oldSessionSecret: parseSessionSecret('OLD_SESSION_SECRET', nonEmpty(env.OLD_SESSION_SECRET)),
    smtpUrl: parseSmtpUrl(nonEmpty(env.SMTP_URL)),
    emailFrom: env.EMAIL_FROM ?? `Countersign <no-reply@${new URL(publicUrl).hostname}>`,
    xrplNodeUrl: parseXrplNodeUrl(nonEmpty(env.XRPL_NODE_URL)),
    xrplNetwork: (env.XRPL_NETWORK ?? 'testnet').toLowerCase(),
    xrplExplorerUrl: parseExplorerUrl(env.XRPL_EXPLORER_URL, (env.XRPL_NETWORK ?? 'testnet').toLowerCase()),
    metrics: {
      token: parseMetricsToken(nonEmpty(env.METRICS_TOKEN)),
      host: env.METRICS_HOST ?? '127.0.0.1',
      port: env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : parsePort('METRICS_PORT', env.METRICS_PORT),
    },
    authFailuresPerMinute: parsePositiveInteger('AUTH_FAILURES_PER_MINUTE', env.AUTH_FAILURES_PER_MINUTE ?? '30'),
    trustProxy: parseTrustProxy(nonEmpty(env.TRUST_PROXY)),
    webhookAllowPrivateTargets: parseBoolean('WEBHOOK_ALLOW_PRIVATE_TARGETS', env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? 'false'),
    logLevel: parseLogLevel(env.LOG_LEVEL ?? 'info'),
    limits: {
      free: parseLimits('LIMITS_FREE', env.LIMITS_FREE, DEFAULT_PLAN_LIMITS.free),
      pro: parseLimits('LIMITS_PRO', env.LIMITS_PRO, DEFAULT_PLAN_LIMITS.pro),
    },
    xaman: env.XAMAN_API_KEY
      ? {
          apiKey: env.XAMAN_API_KEY,
          apiSecret: env.XAMAN_API_SECRET as string,
          apiUrl: parseSecretBearingUrl('XAMAN_API_URL', env.XAMAN_API_URL ?? 'https://xumm.app', 'a local test double').href.replace(
            /\/+$/,
            '',
          ),
        }
      : undefined,
  }
}

/** A comma-separated list of domain names (example.com, mail.example.org), lower-cased; no wildcards. */
function parseEmailDomains(name: string, value: string | undefined): readonly string[] | undefined {
  if (value === undefined) return undefined
  const domains = value.split(',').map((domain) => domain.trim().toLowerCase())
  const label = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?'
  const valid = new RegExp(`^${label}(?:\\.${label})+$`)
  const wrong = domains.find((domain) => !valid.test(domain))
  if (wrong !== undefined)
    throw new ConfigError(`${name} must be a comma-separated list of domain names such as example.com, got "${wrong}"`)
  return domains
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

/** A server secret must be at least this long: it keys HMACs and AES-256 through HKDF. */
export const MIN_SESSION_SECRET_BYTES = 32

/** Never repeats the value: it is a secret. */
function parseSessionSecret(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const bytes = Buffer.byteLength(value, 'utf8')
  if (bytes < MIN_SESSION_SECRET_BYTES) {
    throw new ConfigError(
      `${name} must be at least ${MIN_SESSION_SECRET_BYTES} bytes, got ${bytes}: generate one with \`openssl rand -base64 48\``,
    )
  }
  return value
}

/** Decimal digits only: Number() would take "0xa4a7", "4.2e4" or " " as another port. */
function parsePort(name: string, value: string): number {
  const port = Number(value)
  if (!/^\d{1,5}$/.test(value) || port > 65535) throw new ConfigError(`${name} must be an integer from 0 to 65535, got "${value}"`)
  return port
}

const MIN_METRICS_TOKEN_CHARS = 16

/** Never repeats the value: it is a credential. */
function parseMetricsToken(value: string | undefined): string | undefined {
  if (value !== undefined && value.length < MIN_METRICS_TOKEN_CHARS) {
    throw new ConfigError(
      `METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_CHARS} characters: generate one with \`openssl rand -hex 24\``,
    )
  }
  return value
}

function parseHttpUrl(name: string, value: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${value}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be http or https`)
  return url
}

/** Hosts on which a URL may be plain http: a provider or a double that runs on this machine, for tests. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * The URL of a service the server sends a secret to with every call (Xaman's API secret, OIDC's client secret): https,
 * or http on loopback only (`loopbackUse` says for what), never plain http across a network.
 */
export function parseSecretBearingUrl(name: string, value: string, loopbackUse: string): URL {
  const url = parseHttpUrl(name, value)
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new ConfigError(`${name} must be an https URL (http is accepted only on loopback, for ${loopbackUse})`)
  }
  return url
}

/** The origin alone: routes, the /auth cookie path and the Origin checks all assume the service sits at the root. */
function parseOrigin(name: string, value: string): string {
  const url = parseHttpUrl(name, value)
  if (url.href !== `${url.origin}/`) {
    throw new ConfigError(`${name} must be scheme, host and optional port only (no path, query, fragment or user), got "${value}"`)
  }
  return url.origin
}

/**
 * The signing pages' own origin, or PUBLIC_URL's. Another origin must be another host name: browsers share cookies
 * between the ports and schemes of one host, so the dashboard's session would reach the signing pages all the same.
 */
function parseSigningUrl(value: string | undefined, publicUrl: string): string {
  if (value === undefined) return publicUrl
  const signingUrl = parseOrigin('SIGNING_URL', value)
  if (signingUrl !== publicUrl && new URL(signingUrl).hostname === new URL(publicUrl).hostname) {
    throw new ConfigError(
      `SIGNING_URL must be PUBLIC_URL or on another host name than PUBLIC_URL's (${new URL(publicUrl).hostname}): browsers share cookies between a host's ports and schemes`,
    )
  }
  return signingUrl
}

/** The value is kept as given, for nodemailer; errors never repeat it, as it may hold the SMTP password. */
function parseSmtpUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError('SMTP_URL must be an absolute URL, as smtp://user:password@host:587')
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError('SMTP_URL must start with smtp:// or smtps://')
  if (url.hostname === '') throw new ConfigError('SMTP_URL must name a host, as smtp://user:password@host:587')
  return value
}

function parseLogLevel(value: string): LogLevel {
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel
  throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`)
}

/**
 * `sqlite:` alone (`sqlite:$DB_PATH` with the variable unset) is refused: SQLite opens an empty path as a temporary
 * database, deleted when the process exits, so a command or an instance ran on it as if all were well and lost what
 * it wrote. A refusal names what was given by its scheme alone: a misspelt PostgreSQL URL holds the password.
 */
function parseDatabaseUrl(value: string): string {
  if (value.startsWith('sqlite:')) {
    if (value.slice('sqlite:'.length).trim() === '') {
      throw new ConfigError('DATABASE_URL must name the database file after sqlite:, as sqlite:./data/countersign.db')
    }
    return value
  }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://')) return value
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(value)?.[0]
  throw new ConfigError(
    `DATABASE_URL must be sqlite:PATH or postgres://...${scheme === undefined ? '' : `, got a value starting "${scheme}"`}`,
  )
}

/** The largest delay a timer takes (2^31 - 1 ms, some 24.8 days): Node runs a longer one at once, and again, every millisecond. */
const MAX_TIMER_MS = 2_147_483_647

function parsePositiveInteger(name: string, value: string): number {
  const parsed = Number(value)
  if (!/^\d+$/.test(value) || parsed < 1 || parsed > MAX_TIMER_MS) {
    throw new ConfigError(`${name} must be an integer from 1 to ${MAX_TIMER_MS}, got "${value}"`)
  }
  return parsed
}

/**
 * `true` and hop counts are refused: trusting every hop lets any client name its own address in X-Forwarded-For and so
 * escape the per-address limits, and a hop count cannot tell a proxy from a client. Name the proxies.
 */
function parseTrustProxy(value: string | undefined): false | string {
  if (value === undefined || value === 'false') return false
  if (value === 'true' || /^\d+$/.test(value)) {
    throw new ConfigError(
      `TRUST_PROXY must list the proxies in front (addresses or CIDR ranges, e.g. 10.0.0.0/8), got "${value}": trusting any hop would let a client choose its own address`,
    )
  }
  const entries = value.split(',').map((entry) => entry.trim())
  // A range of every address (0.0.0.0/0, ::/0) trusts any hop, as `true` would.
  if (entries.some((entry) => /\/0+$/.test(entry))) {
    throw new ConfigError(
      `TRUST_PROXY must list the proxies in front (addresses or CIDR ranges, e.g. 10.0.0.0/8), got "${value}": a range of every address would let a client choose its own address`,
    )
  }
  const wrong = entries.find((entry) => !isProxyEntry(entry))
  if (wrong !== undefined) throw new ConfigError(`TRUST_PROXY must be a comma-separated list of addresses and CIDR ranges, got "${wrong}"`)
  return entries.join(',')
}

/** A name proxy-addr knows, an IP address, or one with a prefix length its family allows (999.1.1.1 or /99 had crashed the start). */
function isProxyEntry(entry: string): boolean {
  if (entry === 'loopback' || entry === 'linklocal' || entry === 'uniquelocal') return true
  const [address = '', prefix, ...more] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || more.length > 0) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/** ioredis takes redis:// and rediss:// URLs; anything else it would read as a Unix socket's path (a typo, "redis//host", too). */
function parseRedisUrl(value: string | undefined): string | undefined {
  if (value === undefined || /^rediss?:\/\/[^/]/.test(value)) return value
  throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://redis-host:6379')
}

/** The node is spoken to over WebSocket: ws:// or wss://, with a host. */
function parseXrplNodeUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const url = URL.parse(value)
  if (url === null || (url.protocol !== 'ws:' && url.protocol !== 'wss:') || url.hostname === '') {
    // The value is not repeated: a hosted node's URL carries its access token.
    throw new ConfigError("XRPL_NODE_URL must be the node's WebSocket URL, ws:// or wss://, e.g. wss://s.altnet.rippletest.net:51233")
  }
  return value
}

function parseBoolean(name: string, value: string): boolean {
  if (value === 'true' || value === '1') return true
  if (value === 'false' || value === '0') return false
  throw new ConfigError(`${name} must be true or false, got "${value}"`)
}

const LIMIT_KEYS = ['requestsPerMinute', 'minPollIntervalMs', 'maxExpiresInSeconds', 'monthlyPayloads', 'maxLiveStreams'] as const

function parseLimits(name: string, value: string | undefined, defaults: PlanLimits): PlanLimits {
  if (!value) return defaults
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw new ConfigError(`${name} must be a JSON object, got "${value}"`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(`${name} must be a JSON object`)
  const limits = { ...defaults }
  for (const [key, raw] of Object.entries(parsed)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`${name}: unknown limit "${key}"; known limits are ${LIMIT_KEYS.join(', ')}`)
    }
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0)
      throw new ConfigError(`${name}: ${key} must be a non-negative integer`)
    // Rate-limit windows are whole seconds (windowSeconds): any other interval would be silently rounded up.
    if (key === 'minPollIntervalMs' && raw % 1000 !== 0) {
      throw new ConfigError(`${name}: minPollIntervalMs must be 0 (no poll gate) or a multiple of 1000, got ${raw}`)
    }
    // A payload needs at least one second to live; 0 would expire every payload created without expiresIn at once.
    if (key === 'maxExpiresInSeconds' && raw < 1) throw new ConfigError(`${name}: maxExpiresInSeconds must be at least 1`)
    limits[key as (typeof LIMIT_KEYS)[number]] = raw
  }
  return limits
}

/** The public XRPL explorers of the networks XRPL_NETWORK commonly names; another network has none unless configured. */
const DEFAULT_EXPLORERS: Record<string, string> = {
  mainnet: 'https://livenet.xrpl.org/transactions/{txHash}',
  testnet: 'https://testnet.xrpl.org/transactions/{txHash}',
  devnet: 'https://devnet.xrpl.org/transactions/{txHash}',
}

/** XRPL_EXPLORER_URL: an http(s) URL with {txHash}; empty turns the link off; unset takes the network's default. */
function parseExplorerUrl(value: string | undefined, network: string): string | undefined {
  if (value === undefined) return DEFAULT_EXPLORERS[network]
  if (value.trim() === '') return undefined
  let url: URL
  try {
    url = new URL(value.replaceAll('{txHash}', 'HASH'))
  } catch {
    throw new ConfigError('XRPL_EXPLORER_URL must be an absolute http(s) URL with {txHash}, e.g. https://explorer.example/tx/{txHash}')
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !value.includes('{txHash}')) {
    throw new ConfigError('XRPL_EXPLORER_URL must be an absolute http(s) URL with {txHash}, e.g. https://explorer.example/tx/{txHash}')
  }
  return value
}
