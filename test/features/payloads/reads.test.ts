import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, it } from 'node:test'
import { forEachDatabase, statementsDuring } from '../../support/databases.js'
import { createPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

/** The Pro plan's request rate raised and its poll gate off, so that a test's own reads are never refused. */
const UNLIMITED_READS = { env: { LIMITS_PRO: '{"requestsPerMinute": 100000, "minPollIntervalMs": 0}' } }

forEachDatabase('payload reads, read together', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect, UNLIMITED_READS)
  })
  after(() => t.stop())

  it('answers each read of one turn with its own payload, as committed before it was asked for', async () => {
    const { apiKey } = await t.createProject('pro')
    const other = await t.createProject('pro')
    const uuids = [await createPayload(t, apiKey), await createPayload(t, apiKey), await createPayload(t, apiKey)]
    const othersPayload = await createPayload(t, other.apiKey)
    // Changed behind the service's back just before the reads: they see it.
    await t.service.ctx.storage.db.updateTable('payloads').set({ status: 'rejected' }).where('uuid', '=', uuids[1]!).execute()
    const asked = [uuids[0]!, uuids[1]!, uuids[0]!, randomUUID(), othersPayload, uuids[2]!]
    const { result: answers, statements } = await statementsDuring(() =>
      Promise.all(asked.map((uuid) => t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) }))),
    )
    assert.deepEqual(
      answers.map((answer) => (answer.statusCode === 200 ? `${answer.json().uuid} ${answer.json().status}` : answer.statusCode)),
      [`${uuids[0]} pending`, `${uuids[1]} rejected`, `${uuids[0]} pending`, 404, 404, `${uuids[2]} pending`],
      "each its own payload; an unknown uuid and another project's payload are not found",
    )
    if (dialect === 'postgres') {
      const reads = statements.filter((text) => /^select .* from "payloads" where "uuid"/.test(text))
      assert.equal(reads.length, 1, `six reads, one statement: ${reads.join('\n')}`)
    }
  })

  it('gives two readers of the same payload a payload each', async () => {
    const { apiKey } = await t.createProject('pro')
    const uuid = await createPayload(t, apiKey)
    const payloads = t.service.ctx.payloads
    const [first, second] = await Promise.all([payloads.getForSigning(uuid), payloads.getForSigning(uuid)])
    assert.notEqual(first, second)
    assert.deepEqual(first, second)
    first.transaction!.Amount = '1'
    assert.notEqual(second.transaction!.Amount, '1', 'a change to one is not seen by the other')
  })
})
