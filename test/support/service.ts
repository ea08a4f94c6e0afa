// Starts the real service on a fresh database for a test, with a manual clock, and helpers to call it.
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { type Config, loadConfig } from '../../src/config.js'
import type { PlanName } from '../../src/features/projects/plans.js'
import { type RunningService, startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, type TestDialect } from './databases.js'

export interface TestService {
  service: RunningService
  clock: ManualClock
  config: Config
  /** Base URL when started with listen: true. */
  url: string
  inject(options: InjectOptions): Promise<LightMyRequestResponse>
  createProject(plan?: PlanName, name?: string): Promise<{ projectId: string; apiKey: string }>
  stop(): Promise<void>
}

export interface TestServiceOptions {
  env?: Record<string, string>
  listen?: boolean
  workers?: boolean
  clock?: ManualClock
  /** Another instance on this database (left for its creator to drop) instead of a fresh one. */
  databaseUrl?: string
  /** Where the service's log lines go, parsed, from level info up (otherwise TEST_LOG's level, silent by default). */
  logLines?: Record<string, unknown>[]
}

export async function startTestService(dialect: TestDialect, options: TestServiceOptions = {}): Promise<TestService> {
  const database = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : await createTestDatabase(dialect)
  const config = loadConfig({
    PORT: '0',
    PUBLIC_URL: 'http://countersign.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...options.env,
    DATABASE_URL: database.url,
  })
  const clock = options.clock ?? new ManualClock()
  const service = await startService(config, {
    clock,
    logger:
      options.logLines === undefined
        ? createLogger(process.env.TEST_LOG ?? 'silent')
        : createLogger('info', { write: (line: string) => options.logLines?.push(JSON.parse(line)) }),
    listen: options.listen ?? false,
    workers: options.workers ?? false,
  })
  return {
    service,
    clock,
    config,
    url: service.url ?? '',
    inject: (request) => service.app.inject(request),
    async createProject(plan = 'free', name = 'Test shop') {
      const { project, key } = await service.ctx.projects.createProject({ name, plan })
      return { projectId: project.id, apiKey: key.apiKey }
    },
    async stop() {
      await service.stop()
      await database.drop()
    },
  }
}

export const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` })
