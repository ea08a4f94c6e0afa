import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { forEachDatabase } from '../../support/databases.js'
import { NODE_NEVER_ASKED, payloadBodies } from '../../support/fixtures.js'
import { readPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

forEachDatabase('payload API, happy paths', (dialect) => {
  let t: TestService
  let apiKey: string
  before(async () => {
    t = await startTestService(dialect, { env: NODE_NEVER_ASKED })
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(() => t.stop())

  const create = (body: object) => t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })
  const get = (uuid: string) => readPayload(t, apiKey, uuid)

  for (const [type, body] of Object.entries(payloadBodies)) {
    it(`creates a ${type} payload with exactly the fields of docs/interface.md §4`, async () => {
      const response = await create({ ...body, options: { expiresIn: 600 } })
      assert.equal(response.statusCode, 201)
      const created = response.json()
      assert.deepEqual(Object.keys(created).sort(), ['createdAt', 'expiresAt', 'signingUrl', 'status', 'type', 'uuid'])
      assert.equal(created.type, type)
      assert.equal(created.status, 'pending')
      assert.match(created.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.equal(created.signingUrl, `http://countersign.test/sign/${created.uuid}`)
      assert.match(created.expiresAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.equal(created.createdAt, new Date(t.clock.now()).toISOString())
      assert.equal(Date.parse(created.expiresAt) - Date.parse(created.createdAt), 600_000)
    })
  }

  it('defaults the TTL to 300 seconds', async () => {
    const created = (await create(payloadBodies.connect)).json()
    assert.equal(Date.parse(created.expiresAt) - Date.parse(created.createdAt), 300_000)
  })

  it('reads a payload with every field of docs/interface.md §2, null until set, and the type-specific fields', async () => {
    const sign = (await create(payloadBodies.sign)).json()
    const message = (await create(payloadBodies.signMessage)).json()
    const submit = (await create(payloadBodies.signAndSubmit)).json()
    const signView = await get(sign.uuid)
    assert.deepEqual(signView, {
      uuid: sign.uuid,
      type: 'sign',
      status: 'pending',
      signerAddress: null,
      txHash: null,
      walletAdapter: null,
      expiresAt: sign.expiresAt,
      createdAt: sign.createdAt,
      resolvedAt: null,
      externalId: null,
      metadata: null,
      txBlob: null,
    })
    const messageView = await get(message.uuid)
    assert.equal(messageView.publicKey, null)
    assert.equal(messageView.signature, null)
    assert.equal('txBlob' in messageView, false)
    const submitView = await get(submit.uuid)
    assert.deepEqual(submitView.submission, {
      engineResult: null,
      txHash: null,
      validatedResult: null,
      ledgerIndex: null,
      outcome: null,
      deliveredAmount: null,
    })
  })

  it('accepts the key as the api_key query parameter', async () => {
    const response = await t.inject({ method: 'POST', url: `/api/v1/payloads?api_key=${apiKey}`, payload: payloadBodies.connect })
    assert.equal(response.statusCode, 201)
  })

  it('cancels a pending payload: DELETE makes it expired with resolvedAt, and a second DELETE is 409', async () => {
    const created = (await create(payloadBodies.sign)).json()
    const cancel = await t.inject({ method: 'DELETE', url: `/api/v1/payloads/${created.uuid}`, headers: bearer(apiKey) })
    assert.equal(cancel.statusCode, 200)
    assert.deepEqual(cancel.json(), { uuid: created.uuid, status: 'expired' })
    const view = await get(created.uuid)
    assert.equal(view.status, 'expired')
    assert.equal(view.resolvedAt, new Date(t.clock.now() - 1000).toISOString())
    const again = await t.inject({ method: 'DELETE', url: `/api/v1/payloads/${created.uuid}`, headers: bearer(apiKey) })
    assert.equal(again.statusCode, 409)
    assert.deepEqual(again.json(), { error: 'Payload is already expired' })
  })

  it('never shows a pending payload past its expiry: a read expires it', async () => {
    const created = (await create({ ...payloadBodies.connect, options: { expiresIn: 5 } })).json()
    t.clock.advance(4000)
    assert.equal((await get(created.uuid)).status, 'expired')
    const view = await get(created.uuid)
    assert.equal(view.resolvedAt, new Date(Date.parse(created.createdAt) + 5000).toISOString())
  })

  it('the sweeper expires overdue payloads that nobody reads', async () => {
    const created = (await create({ ...payloadBodies.connect, options: { expiresIn: 2 } })).json()
    assert.equal(await t.service.ctx.payloads.expireOverdue(), 0)
    t.clock.advance(2000)
    assert.ok((await t.service.ctx.payloads.expireOverdue()) >= 1)
    const row = await t.service.ctx.storage.db.selectFrom('payloads').selectAll().where('uuid', '=', created.uuid).executeTakeFirstOrThrow()
    assert.equal(row.status, 'expired')
    assert.equal(row.resolved_at, t.clock.now())
  })

  it('lists payloads newest first with limit and offset, and filters by status and type', async () => {
    const project = await t.createProject('pro')
    const uuids: string[] = []
    for (let i = 0; i < 5; i++) {
      t.clock.advance(10)
      const body = i % 2 === 0 ? payloadBodies.connect : payloadBodies.signMessage
      uuids.push((await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(project.apiKey), payload: body })).json().uuid)
    }
    const list = (query: string) => t.inject({ method: 'GET', url: `/api/v1/payloads${query}`, headers: bearer(project.apiKey) })
    const all = (await list('')).json()
    assert.equal(all.limit, 20)
    assert.equal(all.offset, 0)
    assert.deepEqual(
      all.payloads.map((p: { uuid: string }) => p.uuid),
      [...uuids].reverse(),
    )
    const page = (await list('?limit=2&offset=1')).json()
    assert.deepEqual(
      page.payloads.map((p: { uuid: string }) => p.uuid),
      [uuids[3], uuids[2]],
    )
    assert.equal(page.limit, 2)
    assert.equal(page.offset, 1)
    assert.equal(page.hasMore, true, 'two more follow')
    assert.equal(all.hasMore, false)
    const last = (await list('?limit=2&offset=3')).json()
    assert.deepEqual(
      last.payloads.map((p: { uuid: string }) => p.uuid),
      [uuids[1], uuids[0]],
    )
    assert.equal(last.hasMore, false, 'the last page, exactly full')
    assert.equal((await list('?limit=4&offset=0')).json().hasMore, true)
    const messages = (await list('?type=signMessage')).json()
    assert.equal(messages.payloads.length, 2)
    assert.equal((await list('?status=signed')).json().payloads.length, 0)
  })

  it('pages by cursor: after the last uuid of a page, payloads created meanwhile neither move nor repeat the next page', async () => {
    const project = await t.createProject('pro')
    const other = await t.createProject('pro')
    const make = async (key: string) =>
      (await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(key), payload: payloadBodies.signMessage })).json()
        .uuid as string
    const uuids: string[] = []
    // Three at one millisecond: ties are ordered by uuid, and the cursor must step through them too.
    for (let i = 0; i < 6; i++) {
      if (i % 3 === 0) t.clock.advance(10)
      uuids.push(await make(project.apiKey))
    }
    const list = async (query: string) =>
      (await t.inject({ method: 'GET', url: `/api/v1/payloads${query}`, headers: bearer(project.apiKey) })).json()
    const newestFirst = (await list('')).payloads.map((p: { uuid: string }) => p.uuid)
    assert.deepEqual([...newestFirst].sort(), [...uuids].sort())

    const first = await list('?limit=2')
    t.clock.advance(10)
    const createdMeanwhile = await make(project.apiKey)
    const seen: string[] = first.payloads.map((p: { uuid: string }) => p.uuid)
    let page = first
    while (page.hasMore) {
      page = await list(`?limit=2&after=${seen[seen.length - 1]}`)
      assert.equal(page.offset, 0)
      seen.push(...page.payloads.map((p: { uuid: string }) => p.uuid))
    }
    assert.deepEqual(seen, newestFirst, 'every payload once, in order; the one created meanwhile is not in the later pages')
    assert.ok(!seen.includes(createdMeanwhile))
    assert.deepEqual(
      (await list(`?after=${createdMeanwhile}&limit=1`)).payloads.map((p: { uuid: string }) => p.uuid),
      [newestFirst[0]],
    )

    const refused = async (query: string, field: string) => {
      const response = await t.inject({ method: 'GET', url: `/api/v1/payloads${query}`, headers: bearer(project.apiKey) })
      assert.equal(response.statusCode, 422, query)
      assert.equal(response.json().details[0].field, field, query)
      return response.json().details[0].message
    }
    const ofAnotherProject = await make(other.apiKey)
    const unknown = await refused('?after=00000000-0000-4000-8000-000000000000', 'after')
    assert.equal(await refused(`?after=${ofAnotherProject}`, 'after'), unknown, "another project's payload is as unknown")
    assert.equal(await refused('?after=not-a-uuid', 'after'), unknown)
    await refused(`?after=${uuids[0]}&offset=2`, 'offset')
  })
})
