// Every environment variable the service reads, parsed and validated in one place.
import type { PlanLimits, PlanName } from './features/projects/plans.js'
import { DEFAULT_PLAN_LIMITS } from './features/projects/plans.js'

export interface Config {
  port: number
  host: string
  publicUrl: string
  databaseUrl: string
  redisUrl: string | undefined
  /** LIVE_HEARTBEAT_MS: how often an open live stream sends a comment line, so that proxies keep it open. */
  liveHeartbeatMs: number
  oidc:
    | { issuer: string; clientId: string; clientSecret: string; tokenAuthMethod: 'client_secret_basic' | 'client_secret_post' }
    | undefined
  sessionSecret: string | undefined
  smtpUrl: string | undefined
  emailFrom: string
  xrplNodeUrl: string | undefined
  /** XRPL_NETWORK, lower-cased: "mainnet" turns off the developer wallet however the operator spelled it. */
  xrplNetwork: string
  /** XRPL_EXPLORER_URL: a transaction's page, with {txHash}; by default the XRPL explorer of mainnet, testnet or devnet. */
  xrplExplorerUrl: string | undefined
  webhookAllowPrivateTargets: boolean
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

export function loadConfig(env: Env = process.env): Config {
  const port = parsePort(env.PORT ?? '3000')
  const publicUrl = parsePublicUrl(env.PUBLIC_URL ?? `http://localhost:${port}`)
  const oidcIssuer = env.OIDC_ISSUER
  const tokenAuthMethod = env.OIDC_TOKEN_AUTH_METHOD ?? 'client_secret_basic'
  if (tokenAuthMethod !== 'client_secret_basic' && tokenAuthMethod !== 'client_secret_post') {
    throw new ConfigError('OIDC_TOKEN_AUTH_METHOD must be client_secret_basic or client_secret_post')
  }
  if (oidcIssuer && (!env.OIDC_CLIENT_ID || !env.OIDC_CLIENT_SECRET)) {
    throw new ConfigError('OIDC_ISSUER is set: OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required too')
  }
  if (env.XAMAN_API_KEY && !env.XAMAN_API_SECRET) {
    throw new ConfigError('XAMAN_API_KEY is set: XAMAN_API_SECRET is required too')
  }
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    publicUrl,
    databaseUrl: parseDatabaseUrl(env.DATABASE_URL ?? 'sqlite:./data/countersign.db'),
    redisUrl: nonEmpty(env.REDIS_URL),
    liveHeartbeatMs: parsePositiveInteger('LIVE_HEARTBEAT_MS', env.LIVE_HEARTBEAT_MS ?? '15000'),
    oidc: oidcIssuer
      ? {
          issuer: oidcIssuer,
          clientId: env.OIDC_CLIENT_ID as string,
          clientSecret: env.OIDC_CLIENT_SECRET as string,
          tokenAuthMethod,
        }
      : undefined,
    sessionSecret: nonEmpty(env.SESSION_SECRET),
    smtpUrl: parseSmtpUrl(nonEmpty(env.SMTP_URL)),
    emailFrom: env.EMAIL_FROM ?? `Countersign <no-reply@${new URL(publicUrl).hostname}>`,
    xrplNodeUrl: nonEmpty(env.XRPL_NODE_URL),
    xrplNetwork: (env.XRPL_NETWORK ?? 'testnet').toLowerCase(),
    xrplExplorerUrl: parseExplorerUrl(env.XRPL_EXPLORER_URL, (env.XRPL_NETWORK ?? 'testnet').toLowerCase()),
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
          apiUrl: parseHttpUrl('XAMAN_API_URL', env.XAMAN_API_URL ?? 'https://xumm.app').href.replace(/\/+$/, ''),
        }
      : undefined,
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

function parsePort(value: string): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${value}"`)
  return port
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

/** The origin alone: routes, the /auth cookie path and the Origin checks all assume the service sits at the root. */
function parsePublicUrl(value: string): string {
  const url = parseHttpUrl('PUBLIC_URL', value)
  if (url.href !== `${url.origin}/`) {
    throw new ConfigError(`PUBLIC_URL must be scheme, host and optional port only (no path, query, fragment or user), got "${value}"`)
  }
  return url.origin
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

function parseDatabaseUrl(value: string): string {
  if (value.startsWith('sqlite:') || value.startsWith('postgres://') || value.startsWith('postgresql://')) return value
  throw new ConfigError(`DATABASE_URL must be sqlite:PATH or postgres://..., got "${value}"`)
}

function parsePositiveInteger(name: string, value: string): number {
  const parsed = Number(value)
  if (!/^\d+$/.test(value) || parsed < 1) throw new ConfigError(`${name} must be a positive integer, got "${value}"`)
  return parsed
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
    // The Redis poll gate counts whole seconds while the in-memory one is exact: only whole seconds behave the same on both.
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
