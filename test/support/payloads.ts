// The application's side of a payload in tests: create one through the API, and read it back as the app polls.
import assert from 'node:assert/strict'
import { payloadBodies } from './fixtures.js'
import { bearer, type TestService } from './service.js'

/** Creates a payload through the API (a sign request unless `body` says otherwise) and returns its uuid. */
export async function createPayload(t: TestService, apiKey: string, body: object = payloadBodies.sign): Promise<string> {
  const response = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })
  assert.equal(response.statusCode, 201, response.body)
  return response.json().uuid
}

/**
 * The application's read of a payload, answered 200: the clock first moves on by `pollIntervalMs` (the Pro plan's
 * minimum poll interval unless given), so that reads in a row stay within the plan's limits.
 */
export async function readPayload(t: TestService, apiKey: string, uuid: string, pollIntervalMs = 1000) {
  t.clock.advance(pollIntervalMs)
  const response = await t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) })
  assert.equal(response.statusCode, 200, response.body)
  return response.json()
}
