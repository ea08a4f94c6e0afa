import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'

const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

describe('metrics behind METRICS_TOKEN', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { env: { METRICS_TOKEN } })
  })
  after(() => t.stop())

  it('refuses a scraper without the token, or with another one, and serves the one with it', async () => {
    await t.inject({ method: 'GET', url: '/readyz' })
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${METRICS_TOKEN}`, `Bearer ${METRICS_TOKEN}x`]) {
      const refused = await t.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} })
      assert.equal(refused.statusCode, 401, String(authorization))
      assert.doesNotMatch(refused.body, /countersign_http/)
    }
    const served = await t.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    assert.equal(served.statusCode, 200)
    assert.match(served.body, /countersign_http_request_duration_seconds_bucket\{[^}]*route="\/readyz"/)
  })
})

describe('metrics on a listener of their own (METRICS_PORT)', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { listen: true, env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } })
  })
  after(() => t.stop())

  it('serves them there and not on the public address', async () => {
    const metricsUrl = t.service.metricsUrl as string
    assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.notEqual(metricsUrl, t.url)
    await fetch(`${t.url}/readyz`)
    const publicMetrics = await fetch(`${t.url}/metrics`)
    assert.equal(publicMetrics.status, 404)
    assert.match(((await publicMetrics.json()) as { error: string }).error, /their own address/)
    const own = await fetch(`${metricsUrl}/metrics`)
    assert.equal(own.status, 200)
    assert.match(await own.text(), /countersign_http_request_duration_seconds_bucket\{[^}]*route="\/readyz"/)
    assert.equal((await fetch(`${metricsUrl}/api/v1/payloads`)).status, 404)
  })
})

forEachDatabase('docs, health and metrics', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect)
  })
  after(() => t.stop())

  it('serves an OpenAPI 3 document that a real validator accepts, generated from the route schemas', async () => {
    const response = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })
    assert.equal(response.statusCode, 200)
    const document = response.json()
    assert.match(document.openapi, /^3\./)
    await SwaggerParser.validate(structuredClone(document))
    const create = document.paths['/api/v1/payloads'].post
    assert.ok(create.requestBody.content['application/json'].schema.properties.options)
    assert.ok(create.responses['201'])
    assert.ok(create.responses['422'])
    assert.ok(document.paths['/api/v1/payloads/{uuid}'].get)
    assert.ok(document.paths['/api/v1/payloads/{uuid}'].delete)
  })

  it('says how every operation is authenticated, so that generated clients and the docs page send the key', async () => {
    const document = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const apiKey = [{ bearer: [] }, { apiKeyQuery: [] }]
    const securityOf = (path: string, method: string) => document.paths[path][method].security
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, { security?: unknown }>>)) {
      for (const [method, operation] of Object.entries(operations)) assert.ok(Array.isArray(operation.security), `${method} ${path}`)
    }
    assert.deepEqual(securityOf('/api/v1/payloads', 'post'), apiKey)
    assert.deepEqual(securityOf('/api/v1/payloads/{uuid}/events', 'get'), apiKey)
    assert.deepEqual(securityOf('/api/v1/webhooks/{id}/rotate-secret', 'post'), apiKey)
    assert.deepEqual(securityOf('/api/v1/sign/{uuid}/approve', 'post'), [], 'the wallet API is public: the uuid is the capability')
    assert.deepEqual(securityOf('/sign/{uuid}/qr.svg', 'get'), [])
    assert.deepEqual(securityOf('/api/v1/projects', 'post'), [{ session: [] }])
    assert.deepEqual(document.components.securitySchemes.session, {
      type: 'apiKey',
      in: 'cookie',
      name: 'cs_session',
      description:
        "The dashboard's session, set by signing in; state-changing requests also need the dashboard's Origin. An account makes at most 600 requests a minute with its sessions: more is 429 with Retry-After",
    })
  })

  it('serves a docs page at /docs', async () => {
    const response = await t.inject({ method: 'GET', url: '/docs' })
    const page = response.statusCode === 302 ? await t.inject({ method: 'GET', url: response.headers.location as string }) : response
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /swagger-ui/i)
  })

  it('answers /healthz and /readyz; does not serve metrics to anyone who asks when nothing protects them', async () => {
    assert.deepEqual((await t.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' })
    assert.deepEqual((await t.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' })
    const metrics = await t.inject({ method: 'GET', url: '/metrics' })
    assert.equal(metrics.statusCode, 404)
    assert.match(metrics.json().error, /^Metrics are off: set METRICS_TOKEN, or METRICS_PORT/)
    assert.doesNotMatch(metrics.body, /countersign_http/)
  })

  it('echoes a safe request id and generates one otherwise', async () => {
    const given = await t.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } })
    assert.equal(given.headers['x-request-id'], 'abc-123')
    const hostile = await t.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': '<script>' } })
    assert.match(hostile.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/)
  })
})
