import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'

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

  it('serves a docs page at /docs', async () => {
    const response = await t.inject({ method: 'GET', url: '/docs' })
    const page = response.statusCode === 302 ? await t.inject({ method: 'GET', url: response.headers.location as string }) : response
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /swagger-ui/i)
  })

  it('answers /healthz and /readyz, and exposes Prometheus metrics', async () => {
    assert.deepEqual((await t.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' })
    assert.deepEqual((await t.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' })
    const metrics = await t.inject({ method: 'GET', url: '/metrics' })
    assert.equal(metrics.statusCode, 200)
    assert.match(metrics.body, /countersign_http_request_duration_seconds_bucket\{[^}]*route="\/readyz"/)
  })

  it('echoes a safe request id and generates one otherwise', async () => {
    const given = await t.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } })
    assert.equal(given.headers['x-request-id'], 'abc-123')
    const hostile = await t.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': '<script>' } })
    assert.match(hostile.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/)
  })
})
