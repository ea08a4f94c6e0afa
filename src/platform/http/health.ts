// Liveness, readiness and Prometheus metrics.
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { ServiceContext } from '../../context.js'
import { notFound, unauthorized } from '../errors.js'
import { METRICS_UNAUTHORIZED, type Metrics, mayReadMetrics } from './metrics.js'

/**
 * /healthz, /readyz, and /metrics when they belong on this address: with METRICS_PORT they are served on a listener
 * of their own instead, and with neither METRICS_PORT nor METRICS_TOKEN not at all (they name routes and counts).
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: ServiceContext, metrics: Metrics): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    try {
      // A table the migrations made, not `select 1`: a database recreated empty answers that, and every request 503.
      await sql`select 1 from kysely_migration limit 1`.execute(ctx.storage.db)
      return { status: 'ready' }
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable, or without its schema')
      return reply.code(503).send({ status: 'unavailable', error: 'Database is not reachable, or has no schema' })
    }
  })

  const { token, port } = ctx.config.metrics
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (port !== undefined) throw notFound('Metrics are served on their own address (METRICS_HOST, METRICS_PORT), not here')
    if (token === undefined) throw notFound('Metrics are off: set METRICS_TOKEN, or METRICS_PORT for a listener of their own')
    if (!mayReadMetrics(request.headers.authorization, token)) throw unauthorized(METRICS_UNAUTHORIZED)
    reply.header('cache-control', 'no-store')
    reply.header('content-type', metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}
