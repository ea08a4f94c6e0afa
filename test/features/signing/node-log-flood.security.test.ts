// A visitor who holds a signAndSubmit request's uuid can approve it over and over while the service has no XRPL node:
// each approval is the documented 502 and the request stays pending. Each used to write an error line to the
// operator's log, up to the signing routes' 120 a minute per request, and as many more as the visitor has requests:
// now the condition is logged once a minute, whatever the repeats.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Wallet } from 'xrpl'
import { paymentTransaction } from '../../support/fixtures.js'
import { createPayload } from '../../support/payloads.js'
import { startTestService, type TestService } from '../../support/service.js'
import { signRequested } from '../../support/wallet-signing.js'

const APPROVALS = 40
const WARN = 40

describe('approvals repeated while the service has no XRPL node', () => {
  const logLines: Record<string, unknown>[] = []
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { env: { LIMITS_PRO: '{"requestsPerMinute": 100000}' }, logLines })
  })
  after(() => t.stop())

  it('write one error line, not one per approval', async () => {
    const { apiKey } = await t.createProject('pro')
    const requested = paymentTransaction()
    const uuids = [
      await createPayload(t, apiKey, { type: 'signAndSubmit', transaction: requested }),
      await createPayload(t, apiKey, { type: 'signAndSubmit', transaction: requested }),
    ]
    const blob = signRequested(Wallet.generate(), requested).tx_blob
    for (let approval = 0; approval < APPROVALS; approval++) {
      const response = await t.inject({
        method: 'POST',
        url: `/api/v1/sign/${uuids[approval % 2]}/approve`,
        payload: { walletAdapter: 'gemwallet', signedTransaction: blob },
      })
      assert.equal(response.statusCode, 502, response.body)
    }
    const loud = logLines.filter((line) => (line.level as number) >= WARN)
    assert.equal(loud.length, 1, JSON.stringify(loud.map((line) => line.msg)))
    assert.match(String(loud[0]?.msg), /no XRPL node is configured/)
  })
})
