// A visitor who holds a signAndSubmit request's uuid can approve it over and over while the service has no XRPL node,
// or while its node cannot be reached: each approval is the documented 502 and the request stays pending. The
// operator's log says why, once a minute: not a line per approval, which the visitor could repeat up to the signing
// routes' 120 a minute per request, and as many more as the visitor has requests. An application creating multisigned
// requests, which read the signer list from the node, is told the same way.
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { Wallet } from 'xrpl'
import { NODE_NEVER_ASKED, paymentTransaction } from '../../support/fixtures.js'
import { createPayload } from '../../support/payloads.js'
import { freePort } from '../../support/serve-process.js'
import { startTestService, type TestService } from '../../support/service.js'
import { signRequested } from '../../support/wallet-signing.js'

const APPROVALS = 40
const WARN = 40
const ACCOUNT = Wallet.generate().classicAddress

describe('approvals repeated while the XRPL node cannot be asked', () => {
  const services: TestService[] = []
  after(async () => {
    for (const service of services) await service.stop()
  })

  for (const [setting, nodeUrl, said] of [
    ['no XRPL node configured', async () => undefined, /^no XRPL node is configured \(XRPL_NODE_URL\)/],
    ['an XRPL node that is down', async () => `ws://127.0.0.1:${await freePort()}`, /^the XRPL node could not be reached$/],
  ] as const) {
    it(`write one line that says why, not one per approval, with ${setting}`, async () => {
      const logLines: Record<string, unknown>[] = []
      const url = await nodeUrl()
      const env: Record<string, string> = {
        LIMITS_PRO: '{"requestsPerMinute": 100000}',
        ...(url === undefined ? {} : { XRPL_NODE_URL: url }),
      }
      // The payloads were created while a node was configured (a service without one refuses signAndSubmit).
      const creator = await startTestService('sqlite', { env: { ...env, ...NODE_NEVER_ASKED } })
      const t = await startTestService('sqlite', { env, logLines, databaseUrl: creator.config.databaseUrl })
      services.push(t, creator)
      const { apiKey } = await t.createProject('pro')
      const requested = paymentTransaction()
      const uuids = [
        await createPayload(creator, apiKey, { type: 'signAndSubmit', transaction: requested }),
        await createPayload(creator, apiKey, { type: 'signAndSubmit', transaction: requested }),
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
      assert.match(String(loud[0]?.msg), said)
    })
  }

  it('write one line, not one per creation, when multisigned requests cannot read the signer list', async () => {
    const logLines: Record<string, unknown>[] = []
    const env = { LIMITS_PRO: '{"requestsPerMinute": 100000}', XRPL_NODE_URL: `ws://127.0.0.1:${await freePort()}` }
    const t = await startTestService('sqlite', { env, logLines })
    services.push(t)
    const { apiKey } = await t.createProject('pro')
    for (let creation = 0; creation < APPROVALS; creation++) {
      const response = await t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: { authorization: `Bearer ${apiKey}` },
        payload: { type: 'sign', transaction: { ...paymentTransaction(), Account: ACCOUNT }, options: { multisign: true } },
      })
      assert.equal(response.statusCode, 502, response.body)
      assert.match(JSON.parse(response.body).error, /nothing was created, try again$/)
    }
    const loud = logLines.filter((line) => (line.level as number) >= WARN)
    assert.equal(loud.length, 1, JSON.stringify(loud.map((line) => line.msg)))
    assert.match(String(loud[0]?.msg), /^the XRPL node could not be reached$/)
  })
})
