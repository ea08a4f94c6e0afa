// Prometheus metrics: what is counted, who may read it (METRICS_TOKEN), and the optional listener of their own
// (METRICS_HOST, METRICS_PORT) that keeps them off the public address.
import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'

export interface Metrics {
  registry: Registry
  /** Counts a finished request: the app's one onResponse hook calls it, so that it sees every route. */
  observeRequest(request: FastifyRequest, reply: FastifyReply): void
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requestSeconds = new Histogram({
    name: 'countersign_http_request_duration_seconds',
    help: 'HTTP request duration by route and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
  return {
    registry,
    observeRequest(request, reply) {
      requestSeconds.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      )
    },
  }
}

const BEARER = /^Bearer +(\S+) *$/i
const digest = (value: string) => createHash('sha256').update(value).digest()

/** Whether an Authorization header carries the metrics token; compared in constant time. No token configured: yes. */
export function mayReadMetrics(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true
  const given = BEARER.exec(authorization ?? '')?.[1]
  return given !== undefined && timingSafeEqual(digest(given), digest(token))
}

export const METRICS_UNAUTHORIZED = 'Metrics need Authorization: Bearer <METRICS_TOKEN>'

export interface MetricsListener {
  url: string
  close(): Promise<void>
}

/** GET /metrics alone, on its own address; the token is still required when one is configured. */
export async function listenForMetrics(
  metrics: Metrics,
  options: { host: string; port: number; token: string | undefined },
): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const json = (status: number, error: string) =>
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error }))
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') return json(404, 'Only GET /metrics is served here')
    if (!mayReadMetrics(request.headers.authorization, options.token)) return json(401, METRICS_UNAUTHORIZED)
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => json(500, 'Metrics could not be collected'),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address() as AddressInfo
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
