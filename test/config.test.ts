import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ConfigError, loadConfig } from '../src/config.js'
import { isDeveloperWalletAllowed } from '../src/features/signing/view.js'
import { CLI } from './support/serve-process.js'

const run = promisify(execFile)

function refuses(env: Record<string, string>, message: RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error))
      assert.match(error.message, message)
      return true
    },
  )
}

describe('loadConfig', () => {
  it("links the network's XRPL explorer by default, takes XRPL_EXPLORER_URL with {txHash}, and turns the link off when empty", () => {
    assert.equal(loadConfig({}).xrplExplorerUrl, 'https://testnet.xrpl.org/transactions/{txHash}')
    assert.equal(loadConfig({ XRPL_NETWORK: 'MainNet' }).xrplExplorerUrl, 'https://livenet.xrpl.org/transactions/{txHash}')
    assert.equal(loadConfig({ XRPL_NETWORK: 'devnet' }).xrplExplorerUrl, 'https://devnet.xrpl.org/transactions/{txHash}')
    assert.equal(loadConfig({ XRPL_NETWORK: 'xahau' }).xrplExplorerUrl, undefined)
    assert.equal(loadConfig({ XRPL_EXPLORER_URL: 'https://xrpscan.com/tx/{txHash}' }).xrplExplorerUrl, 'https://xrpscan.com/tx/{txHash}')
    assert.equal(loadConfig({ XRPL_EXPLORER_URL: '' }).xrplExplorerUrl, undefined)
    for (const value of ['https://xrpscan.com/tx/', 'javascript:alert(1)//{txHash}', 'not a url {txHash}']) {
      assert.throws(
        () => loadConfig({ XRPL_EXPLORER_URL: value }),
        (error: Error) => error instanceof ConfigError && /XRPL_EXPLORER_URL/.test(error.message),
        value,
      )
    }
  })

  it('takes PUBLIC_URL as scheme, host and optional port, without a trailing slash', () => {
    assert.equal(loadConfig({ PUBLIC_URL: 'https://Sign.Example.com:8443/' }).publicUrl, 'https://sign.example.com:8443')
    assert.equal(loadConfig({ PUBLIC_URL: 'https://sign.example.com:443' }).publicUrl, 'https://sign.example.com')
    assert.equal(loadConfig({ PORT: '4000' }).publicUrl, 'http://localhost:4000')
  })

  it('refuses a PUBLIC_URL with a path, query, fragment or user, which would break routes, cookies and origin checks', () => {
    for (const value of [
      'https://example.com/countersign',
      'https://example.com/countersign/',
      'https://example.com/?x=1',
      'https://example.com/?',
      'https://example.com/#top',
      'https://admin@example.com',
    ]) {
      refuses({ PUBLIC_URL: value }, /^PUBLIC_URL must be scheme, host and optional port only \(no path, query, fragment or user\), got "/)
      assert.throws(
        () => loadConfig({ PUBLIC_URL: value }),
        (error: Error) => error.message.endsWith(`got "${value}"`),
      )
    }
  })

  it('refuses ports, timers, proxies and URLs that would have crashed the start or been read as something else', () => {
    // Number() took these as other ports; an empty PORT is unset (3000), not a random port.
    for (const value of ['0xa4a7', '4.2125e4', ' 3000', '-1', '65536', '3000.0']) {
      refuses({ PORT: value }, /^PORT must be an integer from 0 to 65535, got "/)
    }
    assert.equal(loadConfig({ PORT: '' }).port, 3000)
    // A timer over 2^31 - 1 ms runs at once, every millisecond: 1,829 heartbeats in 2 s.
    refuses({ LIVE_HEARTBEAT_MS: '9999999999' }, /^LIVE_HEARTBEAT_MS must be an integer from 1 to 2147483647, got "9999999999"$/)
    refuses({ PROJECTS_PER_ACCOUNT: '99999999999999999999999' }, /^PROJECTS_PER_ACCOUNT must be an integer from 1 to 2147483647/)
    assert.equal(loadConfig({ LIVE_HEARTBEAT_MS: '2147483647' }).liveHeartbeatMs, 2_147_483_647)
    // These passed the check and crashed the start with a stack trace from the proxy library.
    for (const value of ['999.1.1.1', '1.2.3.4/99', '::1/129', '10.0.0.0/8/8', '1.2.3.4/']) {
      refuses({ TRUST_PROXY: value }, /^TRUST_PROXY must be a comma-separated list of addresses and CIDR ranges, got "/)
    }
    assert.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1/128, loopback' }).trustProxy, '10.0.0.0/8,::1/128,loopback')
    for (const value of ['0.0.0.0/0', '::/0', '10.0.0.0/8,0.0.0.0/00']) {
      refuses(
        { TRUST_PROXY: value },
        /^TRUST_PROXY must list the proxies in front .*: a range of every address would let a client choose its own address$/,
      )
    }
    // A typo was read as a Unix socket's path, and each instance counted its own limits.
    refuses({ REDIS_URL: 'redis//127.0.0.1:6379/6' }, /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/)
    assert.equal(loadConfig({ REDIS_URL: 'rediss://user:pw@redis.example:6380/2' }).redisUrl, 'rediss://user:pw@redis.example:6380/2')
    for (const value of ['http://127.0.0.1:6006', 'garbage', 'ws://', 'https://node.example/SECRET-TOKEN/']) {
      refuses(
        { XRPL_NODE_URL: value },
        /^XRPL_NODE_URL must be the node's WebSocket URL, ws:\/\/ or wss:\/\/, e\.g\. wss:\/\/s\.altnet\.rippletest\.net:51233$/,
      )
    }
    assert.equal(loadConfig({ XRPL_NODE_URL: 'wss://s.altnet.rippletest.net:51233' }).xrplNodeUrl, 'wss://s.altnet.rippletest.net:51233')
  })

  it('serves the signing pages on PUBLIC_URL, or on SIGNING_URL: an origin of another host name, since a host shares its cookies between ports', () => {
    assert.equal(loadConfig({ PUBLIC_URL: 'https://dash.example.com' }).signingUrl, 'https://dash.example.com')
    const separate = loadConfig({ PUBLIC_URL: 'https://dash.example.com', SIGNING_URL: 'https://Sign.Example.com/' })
    assert.equal(separate.signingUrl, 'https://sign.example.com')
    assert.equal(separate.publicUrl, 'https://dash.example.com')
    assert.equal(
      loadConfig({ PUBLIC_URL: 'https://dash.example.com', SIGNING_URL: 'https://dash.example.com:443' }).signingUrl,
      'https://dash.example.com',
    )
    for (const value of ['https://dash.example.com:8443', 'http://dash.example.com']) {
      refuses(
        { PUBLIC_URL: 'https://dash.example.com', SIGNING_URL: value },
        /^SIGNING_URL must be PUBLIC_URL or on another host name than PUBLIC_URL's \(dash\.example\.com\)/,
      )
    }
    refuses({ SIGNING_URL: 'https://sign.example.com/pay' }, /^SIGNING_URL must be scheme, host and optional port only/)
    refuses({ SIGNING_URL: 'sign.example.com' }, /^SIGNING_URL must be an absolute URL/)
  })

  it('refuses a PUBLIC_URL or XAMAN_API_URL that is not an absolute http(s) URL, naming the variable', () => {
    refuses({ PUBLIC_URL: 'sign.example.com' }, /^PUBLIC_URL must be an absolute URL, got "sign\.example\.com"$/)
    refuses({ PUBLIC_URL: 'ftp://sign.example.com' }, /^PUBLIC_URL must be http or https$/)
    const xaman = { XAMAN_API_KEY: 'key', XAMAN_API_SECRET: 'secret' }
    refuses({ ...xaman, XAMAN_API_URL: 'xumm.app' }, /^XAMAN_API_URL must be an absolute URL, got "xumm\.app"$/)
    refuses({ ...xaman, XAMAN_API_URL: 'ws://xumm.app' }, /^XAMAN_API_URL must be http or https$/)
    assert.equal(loadConfig({ ...xaman, XAMAN_API_URL: 'http://127.0.0.1:9000/xaman/' }).xaman?.apiUrl, 'http://127.0.0.1:9000/xaman')
  })

  it('takes OIDC_ALLOWED_EMAIL_DOMAINS as lower-cased domain names, and refuses anything else naming it', () => {
    const oidc = { OIDC_ISSUER: 'https://idp.example', OIDC_CLIENT_ID: 'id', OIDC_CLIENT_SECRET: 'secret' }
    assert.equal(loadConfig(oidc).oidc?.allowedEmailDomains, undefined)
    assert.deepEqual(loadConfig({ ...oidc, OIDC_ALLOWED_EMAIL_DOMAINS: 'Example.com, mail.example.org' }).oidc?.allowedEmailDomains, [
      'example.com',
      'mail.example.org',
    ])
    for (const wrong of ['*.example.com', '@example.com', 'example', 'example.com,,other.org', 'exa mple.com']) {
      refuses({ ...oidc, OIDC_ALLOWED_EMAIL_DOMAINS: wrong }, /^OIDC_ALLOWED_EMAIL_DOMAINS must be a comma-separated list of domain names/)
    }
  })

  it('refuses an OIDC or Xaman setting given without the one it goes with, rather than ignoring it', () => {
    refuses(
      { OIDC_CLIENT_ID: 'id', OIDC_CLIENT_SECRET: 'secret' },
      /^OIDC_CLIENT_ID, OIDC_CLIENT_SECRET are set without OIDC_ISSUER, which they need$/,
    )
    refuses(
      { OIDC_ISSUER: '', OIDC_ALLOWED_EMAIL_DOMAINS: 'example.com' },
      /^OIDC_ALLOWED_EMAIL_DOMAINS is set without OIDC_ISSUER, which it needs$/,
    )
    refuses({ XAMAN_API_SECRET: 'secret' }, /^XAMAN_API_SECRET is set without XAMAN_API_KEY, which it needs$/)
    refuses({ XAMAN_API_URL: 'https://xumm.app' }, /^XAMAN_API_URL is set without XAMAN_API_KEY/)
    assert.equal(loadConfig({ OIDC_CLIENT_ID: '', XAMAN_API_SECRET: '' }).oidc, undefined, 'empty is unset')
  })

  it('takes PROJECTS_PER_ACCOUNT as a positive integer, 20 by default', () => {
    assert.equal(loadConfig({}).projectsPerAccount, 20)
    assert.equal(loadConfig({ PROJECTS_PER_ACCOUNT: '100' }).projectsPerAccount, 100)
    refuses({ PROJECTS_PER_ACCOUNT: '0' }, /^PROJECTS_PER_ACCOUNT/)
  })

  it('refuses an XAMAN_API_URL over plain http but on loopback: the API secret goes with every call', () => {
    const xaman = { XAMAN_API_KEY: 'key', XAMAN_API_SECRET: 'secret' }
    for (const url of ['http://xumm.app', 'http://10.0.0.5:8080', 'http://xaman-proxy.internal']) {
      refuses(
        { ...xaman, XAMAN_API_URL: url },
        /^XAMAN_API_URL must be an https URL \(http is accepted only on loopback, for a local test double\)$/,
      )
    }
    for (const url of ['https://xumm.app', 'http://localhost:9000', 'http://[::1]:9000']) {
      assert.equal(loadConfig({ ...xaman, XAMAN_API_URL: url }).xaman?.apiUrl, url)
    }
    assert.equal(loadConfig(xaman).xaman?.apiUrl, 'https://xumm.app')
  })

  it('takes every pino level as LOG_LEVEL and refuses any other, naming the variable', () => {
    assert.equal(loadConfig({}).logLevel, 'info')
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level)
    }
    refuses({ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"$/)
  })

  it('lower-cases XRPL_NETWORK, so that any spelling of mainnet turns off the developer wallet', () => {
    assert.equal(loadConfig({}).xrplNetwork, 'testnet')
    for (const value of ['mainnet', 'MainNet', 'MAINNET']) {
      const { xrplNetwork } = loadConfig({ XRPL_NETWORK: value })
      assert.equal(xrplNetwork, 'mainnet')
      assert.equal(isDeveloperWalletAllowed(xrplNetwork), false)
    }
    assert.equal(isDeveloperWalletAllowed(loadConfig({ XRPL_NETWORK: 'Devnet' }).xrplNetwork), true)
  })

  it('takes SMTP_URL as given when smtp:// or smtps:// with a host, and refuses others without repeating the password', () => {
    assert.equal(loadConfig({}).smtpUrl, undefined)
    assert.equal(loadConfig({ SMTP_URL: '' }).smtpUrl, undefined)
    assert.equal(loadConfig({ SMTP_URL: 'smtp://mailer:p%40ss@127.0.0.1:587' }).smtpUrl, 'smtp://mailer:p%40ss@127.0.0.1:587')
    assert.equal(loadConfig({ SMTP_URL: 'smtps://mail.example.com' }).smtpUrl, 'smtps://mail.example.com')
    refuses({ SMTP_URL: 'http://127.0.0.1:25' }, /^SMTP_URL must start with smtp:\/\/ or smtps:\/\/$/)
    refuses({ SMTP_URL: 'https://mailer:hunter2@mail.example.com' }, /^SMTP_URL must start with smtp:\/\/ or smtps:\/\/$/)
    refuses({ SMTP_URL: 'smtp://' }, /^SMTP_URL must name a host/)
    refuses({ SMTP_URL: 'smtp://mailer:hunter2@mail example.com' }, /^SMTP_URL must be an absolute URL/)
    assert.throws(
      () => loadConfig({ SMTP_URL: 'smtp://mailer:hunter2@mail example.com' }),
      (error: Error) => !error.message.includes('hunter2'),
    )
  })

  it('refuses a DATABASE_URL of another scheme without repeating it, and sqlite: without a path, which SQLite opens as a throwaway database', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite:./data/shop.db' }).databaseUrl, 'sqlite:./data/shop.db')
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://app:hunter2@db/shop' }).databaseUrl, 'postgresql://app:hunter2@db/shop')
    refuses(
      { DATABASE_URL: 'postgress://app:hunter2@db/shop' },
      /^DATABASE_URL must be sqlite:PATH or postgres:\/\/\.\.\., got a value starting "postgress:"$/,
    )
    refuses({ DATABASE_URL: './data/shop.db' }, /^DATABASE_URL must be sqlite:PATH or postgres:\/\/\.\.\.$/)
    // `sqlite:$DB_PATH` with the variable unset: the data had gone when the process exited.
    refuses({ DATABASE_URL: 'sqlite:' }, /^DATABASE_URL must name the database file after sqlite:/)
    refuses({ DATABASE_URL: 'sqlite: ' }, /^DATABASE_URL must name the database file after sqlite:/)
  })

  it('takes minPollIntervalMs only as 0 or whole seconds, which the memory and Redis limiters both honour exactly', () => {
    assert.equal(loadConfig({ LIMITS_FREE: '{"minPollIntervalMs": 0}' }).limits.free.minPollIntervalMs, 0)
    assert.equal(loadConfig({ LIMITS_PRO: '{"minPollIntervalMs": 2000}' }).limits.pro.minPollIntervalMs, 2000)
    refuses(
      { LIMITS_FREE: '{"minPollIntervalMs": 1500}' },
      /^LIMITS_FREE: minPollIntervalMs must be 0 \(no poll gate\) or a multiple of 1000, got 1500$/,
    )
    refuses(
      { LIMITS_PRO: '{"minPollIntervalMs": 500}' },
      /^LIMITS_PRO: minPollIntervalMs must be 0 \(no poll gate\) or a multiple of 1000, got 500$/,
    )
    refuses({ LIMITS_PRO: '{"minPollIntervalMs": -1000}' }, /^LIMITS_PRO: minPollIntervalMs must be a non-negative integer$/)
  })

  it('takes maxExpiresInSeconds only from 1 second up', () => {
    assert.equal(loadConfig({ LIMITS_FREE: '{"maxExpiresInSeconds": 1}' }).limits.free.maxExpiresInSeconds, 1)
    refuses({ LIMITS_FREE: '{"maxExpiresInSeconds": 0}' }, /^LIMITS_FREE: maxExpiresInSeconds must be at least 1$/)
  })

  it('takes METRICS_TOKEN of at least 16 characters without repeating it, and METRICS_PORT as a port', () => {
    refuses({ METRICS_TOKEN: 'short-token' }, /^METRICS_TOKEN must be at least 16 characters: generate one with/)
    assert.equal(loadConfig({ METRICS_TOKEN: 'x'.repeat(16) }).metrics.token, 'x'.repeat(16))
    refuses({ METRICS_PORT: 'metrics' }, /^METRICS_PORT must be an integer from 0 to 65535, got "metrics"$/)
    assert.deepEqual(loadConfig({ METRICS_PORT: '9100' }).metrics, { token: undefined, host: '127.0.0.1', port: 9100 })
  })
})

describe('countersign with a bad configuration', () => {
  it('stops with a message naming the variable and exit code 2, not a stack trace', async () => {
    const env = { PATH: process.env.PATH, LOG_LEVEL: 'verbose' }
    await assert.rejects(run(process.execPath, [...CLI, 'migrate'], { env }), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 2)
      assert.equal(error.stderr, 'countersign: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"\n')
      return true
    })
  })
})
