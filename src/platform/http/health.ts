// Liveness, readiness and Prometheus metrics.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sql } from 'kysely'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'
import type { ServiceContext } from '../../context.js'

/** Returns what counts a finished request in the metrics: the app's one onResponse hook calls it, so that it sees every route. */
export function registerHealthRoutes(app: FastifyInstance, ctx: ServiceContext): (request: FastifyRequest, reply: FastifyReply) => void {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requestSeconds = new Histogram({
    name: 'countersign_http_request_duration_seconds',
    help: 'HTTP request duration by route and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    try {
      await sql`select 1`.execute(ctx.storage.db)
      return { status: 'ready' }
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable')
      return reply.code(503).send({ status: 'unavailable', error: 'Database is not reachable' })
    }
  })

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('content-type', registry.contentType)
    return registry.metrics()
  })

  return (request, reply) => {
    requestSeconds.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
  }
}
