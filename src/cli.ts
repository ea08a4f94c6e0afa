// The `countersign` command: serve, migrate, and operator tasks. Reads the same configuration as the server.
import { parseArgs } from 'node:util'
import { type Config, ConfigError, loadConfig } from './config.js'
import { createContext } from './context.js'
import { systemClock } from './domain/clock.js'
import { isPlanName, PLAN_NAMES } from './domain/plans.js'
import { createLogger } from './logger.js'
import { startService } from './main.js'
import { openStorage } from './storage/database.js'
import { migrateToLatest } from './storage/migrations.js'
import { loadServerSecret } from './storage/settings-repository.js'

const USAGE = `Usage: countersign <command>

Commands:
  serve                                   migrate the database, then serve (what npm start runs)
  migrate                                 bring the database schema up to date
  project create --name NAME [--plan free|pro] [--json]
                                          create a project and print its first API key
  project set-plan ID free|pro            move a project to another plan

Configuration comes from environment variables; see docs/configuration.md.`

class UsageError extends Error {}

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
    default:
      throw new UsageError(`Unknown command "${command}"`)
  }
}

async function serve(config: Config): Promise<number> {
  const service = await startService(config)
  const base = config.publicUrl
  process.stdout.write(
    `Countersign is listening on ${service.url} (public URL ${base})\n` +
      `  API docs:  ${base}/docs\n  OpenAPI:   ${base}/api/v1/openapi.json\n`,
  )
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      service.ctx.logger.info({ signal }, 'shutting down: finishing in-flight requests')
      resolve()
    }
    process.once('SIGINT', () => shutdown('SIGINT'))
    process.once('SIGTERM', () => shutdown('SIGTERM'))
  })
  await service.stop()
  return 0
}

async function project(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args
  if (sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, plan: { type: 'string', default: 'free' }, json: { type: 'boolean', default: false } },
      strict: true,
    })
    const name = values.name?.trim()
    if (!name || name.length > 100) throw new UsageError('--name is required: 1 to 100 characters')
    const plan = values.plan ?? 'free'
    if (!isPlanName(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`)
    return withContext(config, async (ctx) => {
      const { project, key } = await ctx.projects.createProject({ name, plan })
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
