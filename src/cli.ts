// The `countersign` command: serve, migrate, and operator tasks. Reads the same configuration as the server.
//
// Help and refused arguments are answered from this file's light imports alone: the service's modules (the database
// drivers, Fastify, xrpl) take about 1.5 s to load here, against 0.15 s for the rest, so a command loads them only once
// its arguments hold (serviceModules).
import { randomBytes } from 'node:crypto'
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util'
import { type Config, ConfigError, loadConfig } from './config.js'
import type { ServiceContext } from './context.js'
import { localSignInUrl } from './features/accounts/session-tokens.js'
import { isOneEmailAddress } from './features/email/one-address.js'
import { normalizeName } from './features/projects/names.js'
import { isPlanName, PLAN_NAMES } from './features/projects/plans.js'
import { systemClock } from './platform/clock.js'

/** The modules of a command that opens the database or serves, loaded when one runs (once: import caches them). */
async function serviceModules() {
  const [main, context, migrations, settings, logger, rotation] = await Promise.all([
    import('./main.js'),
    import('./context.js'),
    import('./platform/db/migrations.js'),
    import('./platform/db/settings-repository.js'),
    import('./platform/logger.js'),
    import('./features/webhooks/rotate-server-secret.js'),
  ])
  return { ...main, ...context, ...migrations, ...settings, ...logger, ...rotation }
}

/** Every command: how it is called, what it does, and the options parseArgs accepts (anything else is an error). */
interface Command {
  usage: string
  about: string
  options?: ParseArgsOptionsConfig
  /** How many positional arguments it takes. */
  positionals?: number
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'countersign serve',
    about: 'migrate the database, then serve (what npm start runs); listens on HOST:PORT, links use PUBLIC_URL',
  },
  migrate: { usage: 'countersign migrate', about: 'bring the database schema up to date' },
  'project create': {
    usage: 'countersign project create --name NAME [--plan free|pro] [--email ADDRESS] [--json]',
    about:
      'create a project (owned by the local admin, so it shows in the dashboard) and print its first API key;\n' +
      '--email sets the address notifications go to; --json prints {"id","name","plan","apiKey"}',
    options: {
      name: { type: 'string' },
      plan: { type: 'string', default: 'free' },
      email: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  },
  'project set-plan': {
    usage: `countersign project set-plan ID ${PLAN_NAMES.join('|')}`,
    about: 'move a project to another plan',
    positionals: 2,
  },
  'login-link': {
    usage: 'countersign login-link',
    about:
      'print a one-time dashboard sign-in link for the local admin (without OIDC configured; valid once, for 15 minutes);\n' +
      'the link starts with PUBLIC_URL (default http://localhost:$PORT), as the server it is for',
  },
  'rotate-secret': {
    usage: 'countersign rotate-secret [--discard-unreadable]',
    about:
      're-seal every webhook secret under SESSION_SECRET (the new one); the old one is OLD_SESSION_SECRET, or the\n' +
      'secret generated in the database, which is then removed. Stop every instance first (docs/deployment.md).\n' +
      '--discard-unreadable, for an old secret that is lost: webhooks whose secret opens under neither get a new one\n' +
      'and are disabled until their project rotates it; responses kept with Idempotency-Keys that open under neither\n' +
      'answer 409 from then on',
    options: { 'discard-unreadable': { type: 'boolean' } },
  },
  help: { usage: 'countersign help [COMMAND]', about: 'print this help, or the help of one command', positionals: 2 },
}

const USAGE = `Usage: countersign <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((command) => `  ${command.usage}\n${command.about.replace(/^/gm, '      ')}`)
  .join('\n')}

Every command takes --help (or -h): it prints the command's usage and does nothing else.
Configuration comes from environment variables; see docs/configuration.md.`

function usageOf(name: string): string {
  const command = COMMANDS[name] as Command
  return `Usage: ${command.usage}\n\n${command.about}\n\nConfiguration comes from environment variables; see docs/configuration.md.`
}

class UsageError extends Error {
  constructor(
    message: string,
    readonly usage = USAGE,
  ) {
    super(message)
  }
}

/** The command named by the first one or two words, and the arguments after them. */
function commandOf(argv: string[]): { name: string; args: string[] } | undefined {
  const [first, second, ...rest] = argv
  if (first === undefined) return undefined
  if (second !== undefined && COMMANDS[`${first} ${second}`]) return { name: `${first} ${second}`, args: rest }
  if (COMMANDS[first]) return { name: first, args: argv.slice(1) }
  return undefined
}

const HELP_FLAGS = new Set(['--help', '-h'])

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0) {
    process.stdout.write(`${USAGE}\n`)
    return 2
  }
  // Help is answered before anything else: no configuration read, no database opened, nothing started.
  if (HELP_FLAGS.has(argv[0] as string)) return printHelp(argv.slice(1))
  const found = commandOf(argv)
  if (!found) {
    if (argv[0] === 'project') {
      if (argv.slice(1).some((arg) => HELP_FLAGS.has(arg)) || argv.length === 1) return printHelp(['project'])
      throw new UsageError(`Unknown project command "${argv[1]}"`, projectUsage())
    }
    throw new UsageError(`Unknown command "${argv[0]}"`)
  }
  const { name, args } = found
  if (name === 'help') return printHelp(args)
  if (args.some((arg) => HELP_FLAGS.has(arg))) return printHelp([name])
  const command = COMMANDS[name] as Command
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      args,
      options: command.options ?? {},
      allowPositionals: (command.positionals ?? 0) > 0,
      strict: true,
      tokens: true,
    })
  } catch (error) {
    throw new UsageError((error as Error).message, usageOf(name))
  }
  // parseArgs keeps the last of an option given twice: `--plan free --plan pro` made a Pro project without a word.
  const given = new Set<string>()
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue
    if (given.has(token.name)) throw new UsageError(`--${token.name} is given twice: give it once`, usageOf(name))
    given.add(token.name)
  }
  if (parsed.positionals.length > (command.positionals ?? 0)) {
    throw new UsageError(`Unexpected argument "${parsed.positionals[command.positionals ?? 0]}"`, usageOf(name))
  }

  const config = loadConfig()
  switch (name) {
    case 'serve':
      return serve(config)
    case 'migrate':
      return withContext(config, async (ctx) => {
        const newer = await (await serviceModules()).newerMigrations(ctx.storage)
        process.stdout.write(
          newer.length === 0
            ? 'Database schema is up to date.\n'
            : `Database schema is up to date, and holds migrations of a newer release (${newer.join(', ')}): this release runs on it, as every migration is additive.\n`,
        )
      })
    case 'project create':
      return createProject(config, parsed.values as { name?: string; plan?: string; email?: string; json?: boolean })
    case 'project set-plan':
      return setPlan(config, parsed.positionals)
    case 'rotate-secret':
      return rotateSecret(config, parsed.values['discard-unreadable'] === true)
    default:
      if (config.oidc)
        throw new UsageError('OIDC is configured: sign in to the dashboard at /auth/login; local sign-in links are turned off')
      return withContext(config, async (ctx) => {
        process.stdout.write(`${await createLoginLink(ctx)}\n`)
      })
  }
}

/** `help`, `help COMMAND`, `COMMAND --help`: prints and exits 0; an unknown command is an error. */
function printHelp(words: string[]): number {
  const name = words.join(' ')
  if (name === '') process.stdout.write(`${USAGE}\n`)
  else if (name === 'project') process.stdout.write(`${projectUsage()}\n`)
  else if (COMMANDS[name]) process.stdout.write(`${usageOf(name)}\n`)
  else throw new UsageError(`No help for unknown command "${name}"`)
  return 0
}

function projectUsage(): string {
  return (
    `Usage:\n  ${COMMANDS['project create']?.usage}\n  ${COMMANDS['project set-plan']?.usage}\n\n` +
    'Run `countersign project create --help` for more.'
  )
}

async function serve(config: Config): Promise<number> {
  // Listen for signals before anything slow, so that a SIGTERM during start-up still stops cleanly.
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  const service = await (await serviceModules()).startService(config)
  const base = config.publicUrl
  process.stdout.write(
    `Countersign is listening on ${service.url} (public URL ${base})\n` +
      `  API docs:  ${base}/docs\n  OpenAPI:   ${base}/api/v1/openapi.json\n  Dashboard: ${base}/dashboard\n` +
      (config.signingUrl === base ? '' : `  Signing:   ${config.signingUrl}/sign/{uuid}\n`) +
      (service.metricsUrl ? `  Metrics:   ${service.metricsUrl}/metrics\n` : ''),
  )
  if (!config.oidc) process.stdout.write(await signInLine(config, service.ctx))
  if (!config.sessionSecret) {
    process.stdout.write(
      '  Secrets:   SESSION_SECRET is not set, so a generated one is kept in the database: a copy of the database\n' +
        '             alone opens every webhook secret. Fine for a quick start; in production set SESSION_SECRET\n' +
        '             (at least 32 bytes) and run `countersign rotate-secret` once (docs/deployment.md).\n',
    )
  }
  const signal = await signalled
  service.ctx.logger.info({ signal }, 'shutting down: finishing in-flight requests')
  await service.stop()
  return 0
}

/**
 * The one-time sign-in link is a credential: it is printed only to a person at a terminal, never into a log that
 * others may read (standard output redirected or collected), and never in production.
 */
async function signInLine(config: Config, ctx: ServiceContext): Promise<string> {
  if (config.production || !process.stdout.isTTY) {
    const why = config.production ? 'never printed in production' : 'not printed: standard output is not a terminal'
    return `  Sign in:   run \`countersign login-link\` for a one-time link (${why})\n`
  }
  return (
    `  Sign in:   ${await createLoginLink(ctx)}\n` +
    '             (one-time link for the local admin, valid 15 minutes; `countersign login-link` prints a fresh one)\n'
  )
}

async function rotateSecret(config: Config, discardUnreadable: boolean): Promise<number> {
  const newSecret = config.sessionSecret
  if (newSecret === undefined) {
    throw new UsageError('Set SESSION_SECRET to the new secret (at least 32 bytes) to rotate to it', usageOf('rotate-secret'))
  }
  const { rotateServerSecret } = await serviceModules()
  return withContext(config, async (ctx) => {
    const rotation = await rotateServerSecret(ctx.storage.db, config.oldSessionSecret, newSecret, {
      discardUnreadable,
      nowMs: ctx.clock.now(),
    })
    process.stdout.write(
      `Re-sealed ${rotation.resealed} webhook secret(s) under SESSION_SECRET (${rotation.alreadyCurrent} already were), ` +
        `and ${rotation.resealedResponses} response(s) kept with Idempotency-Keys.\n` +
        (rotation.discardedSecrets.length > 0
          ? `Discarded ${rotation.discardedSecrets.length} webhook secret(s) that opened under neither secret: those webhooks are disabled until their project rotates the secret and enables them (${rotation.discardedSecrets.join(', ')}).\n`
          : '') +
        (rotation.discardedResponses > 0
          ? `Discarded ${rotation.discardedResponses} response(s) kept with Idempotency-Keys: a replay answers 409.\n`
          : '') +
        (rotation.discardedPrevious > 0
          ? `Dropped ${rotation.discardedPrevious} replaced webhook secret(s) still signing beside the new one: they opened under neither secret.\n`
          : '') +
        (rotation.removedGenerated ? 'The generated secret was removed from the database.\n' : '') +
        'Start every instance with the new SESSION_SECRET.\n',
    )
  })
}

async function createProject(config: Config, values: { name?: string; plan?: string; email?: string; json?: boolean }): Promise<number> {
  const usage = usageOf('project create')
  const named = normalizeName('name', values.name ?? '')
  if ('error' in named) throw new UsageError(`--name ${named.error.message} (1 to 100 characters)`, usage)
  const name = named.name
  const email = values.email?.trim()
  if (email !== undefined && !isOneEmailAddress(email))
    throw new UsageError(`--email must be one email address, got "${values.email}"`, usage)
  const plan = values.plan ?? 'free'
  if (!isPlanName(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`, usage)
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

async function setPlan(config: Config, [id, plan]: string[]): Promise<number> {
  if (!id || !plan || !isPlanName(plan))
    throw new UsageError(`Give a project id and one of ${PLAN_NAMES.join(', ')}`, usageOf('project set-plan'))
  return withContext(config, async (ctx) => {
    if (!(await ctx.projects.setPlan(id, plan))) throw new UsageError(`No project with id ${id}`, usageOf('project set-plan'))
    process.stdout.write(`Project ${id} is now on the ${plan} plan.\n`)
  })
}

/** A one-time sign-in link for the local admin (created on first use). */
async function createLoginLink(ctx: ServiceContext): Promise<string> {
  const admin = await ctx.accounts.ensureLocalAdmin()
  const { token } = await ctx.sessions.createLoginToken(admin.id)
  return localSignInUrl(ctx.config.publicUrl, token)
}

async function withContext(config: Config, task: (ctx: ServiceContext) => Promise<void>): Promise<number> {
  const { openMigratedDatabase, settingsRepository, GENERATED_SECRET_KEY, createContext, createLogger } = await serviceModules()
  const storage = await openMigratedDatabase(config.databaseUrl)
  try {
    // The commands seal and open nothing: they take the server secret as it is, and never generate one into the
    // database, which is the service's to do on its first start, once it has checked that nothing sealed needs another
    // (openServerSecret). A command that seals must use openServerSecret instead.
    const serverSecret =
      config.sessionSecret ?? (await settingsRepository.get(storage.db, GENERATED_SECRET_KEY)) ?? randomBytes(32).toString('base64url')
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
  async (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`countersign: ${error.message}\n\n${error.usage}\n`)
      process.exitCode = 2
      return
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`countersign: ${error.message}\n`)
      process.exitCode = 2
      return
    }
    // Any other error comes from a command that ran, which loaded the service's modules already.
    const { SecretRotationError, ServerSecretMismatchError, StartError, MigrationError } = await serviceModules()
    if (error instanceof SecretRotationError || error instanceof ServerSecretMismatchError) {
      process.stderr.write(`countersign: ${error.message}\n`)
      process.exitCode = 2
    } else if (error instanceof StartError || error instanceof MigrationError) {
      process.stderr.write(`countersign: ${error.message}\n`)
      process.exitCode = 1
    } else {
      process.stderr.write(`countersign: ${(error as Error).stack ?? String(error)}\n`)
      process.exitCode = 1
    }
  },
)
