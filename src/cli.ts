// The `countersign` command: serve, migrate, and operator tasks. Reads the same configuration as the server.
import { parseArgs } from 'node:util'
import { type Config, ConfigError, loadConfig } from './config.js'
import { createContext, type ServiceContext } from './context.js'
import { localSignInUrl } from './features/accounts/session-tokens.js'
import { normalizeName } from './features/projects/names.js'
import { isPlanName, PLAN_NAMES } from './features/projects/plans.js'
import { startService } from './main.js'
import { systemClock } from './platform/clock.js'
import { openStorage } from './platform/db/database.js'
import { migrateToLatest } from './platform/db/migrations.js'
import { loadServerSecret } from './platform/db/settings-repository.js'
import { createLogger } from './platform/logger.js'

const USAGE = `Usage: countersign <command>

Commands:
  serve                                   migrate the database, then serve (what npm start runs)
  migrate                                 bring the database schema up to date
  project create --name NAME [--plan free|pro] [--email ADDRESS] [--json]
                                          create a project (owned by the local admin, so it shows in
                                          the dashboard) and print its first API key; --email sets the
                                          address notifications go to
  project set-plan ID free|pro            move a project to another plan
  login-link                              print a one-time dashboard sign-in link for the local admin
                                          (without OIDC configured; valid once, for 15 minutes)

Configuration comes from environment variables; see docs/configuration.md.`

class UsageError extends Error {}

/** A plausible address (something@domain.tld); the mail server has the last word. */
const EMAIL_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`)
    return command ? 0 : 2
  }
  const config = loadConfig()
  switch (command) {
    case 'serve':
      return serve(config)
    case 'migrate':
      return withContext(config, async () => {
        process.stdout.write('Database schema is up to date.\n')
      })
    case 'project':
      return project(config, rest)
    case 'login-link':
      if (config.oidc)
        throw new UsageError('OIDC is configured: sign in to the dashboard at /auth/login; local sign-in links are turned off')
      return withContext(config, async (ctx) => {
        process.stdout.write(`${await createLoginLink(ctx)}\n`)
      })
    default:
      throw new UsageError(`Unknown command "${command}"`)
  }
}

async function serve(config: Config): Promise<number> {
  // Listen for signals before anything slow, so that a SIGTERM during start-up still stops cleanly.
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  const service = await startService(config)
  const base = config.publicUrl
  process.stdout.write(
    `Countersign is listening on ${service.url} (public URL ${base})\n` +
      `  API docs:  ${base}/docs\n  OpenAPI:   ${base}/api/v1/openapi.json\n  Dashboard: ${base}/dashboard\n`,
  )
  if (!config.oidc) {
    process.stdout.write(
      `  Sign in:   ${await createLoginLink(service.ctx)}\n` +
        '             (one-time link for the local admin, valid 15 minutes; `countersign login-link` prints a fresh one)\n',
    )
  }
  const signal = await signalled
  service.ctx.logger.info({ signal }, 'shutting down: finishing in-flight requests')
  await service.stop()
  return 0
}

async function project(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args
  if (sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        plan: { type: 'string', default: 'free' },
        email: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    })
    const named = normalizeName('name', values.name ?? '')
    if ('error' in named) throw new UsageError(`--name ${named.error.message} (1 to 100 characters)`)
    const name = named.name
    const email = values.email?.trim()
    if (email !== undefined && !EMAIL_ADDRESS.test(email)) throw new UsageError(`--email must be an email address, got "${values.email}"`)
    const plan = values.plan ?? 'free'
    if (!isPlanName(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`)
    return withContext(config, async (ctx) => {
      const owner = await ctx.accounts.ensureLocalAdmin(email)
      const { project, key } = await ctx.projects.createProject({ name, plan, accountId: owner.id })
      const result = { id: project.id, name: project.name, plan: project.plan, apiKey: key.apiKey }
      process.stdout.write(
        values.json
          ? `${JSON.stringify(result)}\n`
          : `Created project ${project.name} (${project.id}) on the ${project.plan} plan.\nAPI key (shown once, keep it secret): ${key.apiKey}\n`,
      )
    })
  }
  if (sub === 'set-plan') {
    const [id, plan] = rest
    if (!id || !plan || !isPlanName(plan)) throw new UsageError(`Usage: countersign project set-plan ID ${PLAN_NAMES.join('|')}`)
    return withContext(config, async (ctx) => {
      if (!(await ctx.projects.setPlan(id, plan))) throw new UsageError(`No project with id ${id}`)
      process.stdout.write(`Project ${id} is now on the ${plan} plan.\n`)
    })
  }
  throw new UsageError('Usage: countersign project create|set-plan ...')
}

/** A one-time sign-in link for the local admin (created on first use). */
async function createLoginLink(ctx: ServiceContext): Promise<string> {
  const admin = await ctx.accounts.ensureLocalAdmin()
  const { token } = await ctx.sessions.createLoginToken(admin.id)
  return localSignInUrl(ctx.config.publicUrl, token)
}

async function withContext(config: Config, task: (ctx: ReturnType<typeof createContext>) => Promise<void>): Promise<number> {
  const storage = openStorage(config.databaseUrl)
  try {
    await migrateToLatest(storage.db)
    const serverSecret = await loadServerSecret(storage.db, config.sessionSecret)
    await task(createContext({ config, storage, clock: systemClock, logger: createLogger('warn'), serverSecret }))
    return 0
  } finally {
    await storage.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`countersign: ${(error as Error).message}\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`countersign: ${(error as Error).stack ?? String(error)}\n`)
      process.exitCode = 1
    }
  },
)
