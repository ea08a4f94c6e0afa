import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { KEPT_REVOKED_KEYS } from '../../../src/features/projects/account-projects.js'
import { type DashboardClient, dashboardClient, signedIn } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

forEachDatabase('project endpoints', (dialect) => {
  let t: TestService
  let alice: DashboardClient
  let bob: DashboardClient
  before(async () => {
    t = await startTestService(dialect, { listen: true })
    alice = await signedIn(t, 'alice')
    bob = await signedIn(t, 'bob')
  })
  after(() => t.stop())

  const callApi = (method: string, path: string, apiKey: string, body?: object) =>
    fetch(`${t.url}/api/v1${path}`, {
      method,
      headers: { ...bearer(apiKey), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body && JSON.stringify(body),
    })
  const createProject = async (client: DashboardClient, name = 'Shop') => {
    const response = await client.post('/api/v1/projects', { name })
    assert.equal(response.status, 201)
    return response.body as { id: string; name: string; apiKey: string }
  }

  describe('happy paths', () => {
    it('creates a Free project owned by the account, with a working key shown once', async () => {
      const response = await alice.post('/api/v1/projects', { name: '  Example Shop  ' })
      assert.equal(response.status, 201)
      assert.equal(response.headers.get('cache-control'), 'no-store')
      const created = response.body
      assert.deepEqual(Object.keys(created).sort(), ['apiKey', 'id', 'name'])
      assert.match(created.id, /^proj_[\w-]{22}$/)
      assert.equal(created.name, 'Example Shop')
      assert.match(created.apiKey, /^cs_[\w-]{43}$/)
      assert.equal((await callApi('POST', '/payloads', created.apiKey, payloadBodies.connect)).status, 201)

      const list = await alice.get('/api/v1/projects')
      assert.equal(list.status, 200)
      const listed = list.body.projects.find((p: { id: string }) => p.id === created.id)
      assert.deepEqual(listed, {
        id: created.id,
        name: 'Example Shop',
        displayName: null,
        plan: 'free',
        createdAt: new Date(t.clock.now()).toISOString(),
      })
    })

    it("lists only the account's own projects, oldest first", async () => {
      const carol = await signedIn(t, 'carol')
      const first = await createProject(carol, 'First')
      t.clock.advance(1000)
      const second = await createProject(carol, 'Second')
      await createProject(bob, 'Not Carol’s')
      await t.createProject('pro', 'Made without an account')
      const list = await carol.get('/api/v1/projects')
      assert.deepEqual(
        list.body.projects.map((p: { id: string }) => p.id),
        [first.id, second.id],
      )
      const nobody = await signedIn(t, 'dave')
      assert.deepEqual((await nobody.get('/api/v1/projects')).body, { projects: [] })
    })

    it('shows a project with its monthly usage against the plan limit, and its limits', async () => {
      const project = await createProject(alice, 'Usage')
      for (let i = 0; i < 3; i++) await callApi('POST', '/payloads', project.apiKey, payloadBodies.signMessage)
      const response = await alice.get(`/api/v1/projects/${project.id}`)
      assert.equal(response.status, 200)
      assert.deepEqual(response.body, {
        id: project.id,
        name: 'Usage',
        displayName: null,
        plan: 'free',
        createdAt: new Date(t.clock.now()).toISOString(),
        website: null,
        logoUrl: null,
        usage: { month: '2026-01', used: 3, limit: 1000 },
        limits: { requestsPerMinute: 20, minPollIntervalMs: 3000, maxExpiresInSeconds: 300, monthlyPayloads: 1000 },
      })
      await t.service.ctx.projects.setPlan(project.id, 'pro')
      const pro = (await alice.get(`/api/v1/projects/${project.id}`)).body
      assert.equal(pro.plan, 'pro')
      assert.deepEqual(pro.usage, { month: '2026-01', used: 3, limit: 100000 })
      assert.equal(pro.limits.maxExpiresInSeconds, 86400)
    })

    it('lists keys by prefix with their last use, never in full', async () => {
      const project = await createProject(alice, 'Keys')
      t.clock.advance(5000)
      await callApi('GET', '/payloads', project.apiKey)
      // lastUsedAt is written after the request is answered: wait for that write, not for time to pass.
      await t.service.ctx.authenticator.settled()
      const response = await alice.get(`/api/v1/projects/${project.id}/keys`)
      assert.equal(response.status, 200)
      assert.equal(response.body.keys.length, 1)
      const [key] = response.body.keys
      assert.deepEqual(Object.keys(key).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt'])
      assert.match(key.id, /^key_/)
      assert.equal(key.name, 'Default')
      assert.equal(key.prefix, project.apiKey.slice(0, 11))
      assert.equal(key.createdAt, new Date(t.clock.now() - 5000).toISOString())
      assert.equal(key.lastUsedAt, new Date(t.clock.now()).toISOString())
      assert.equal(key.revokedAt, null)
      assert.equal(JSON.stringify(response.body).includes(project.apiKey.slice(11)), false)
    })

    it('creates keys, named or not; the full key is in the creation response only', async () => {
      const project = await createProject(alice, 'More keys')
      const unnamed = await alice.post(`/api/v1/projects/${project.id}/keys`)
      assert.equal(unnamed.status, 201)
      assert.deepEqual(Object.keys(unnamed.body).sort(), ['apiKey', 'createdAt', 'id', 'name', 'prefix'])
      assert.equal(unnamed.body.name, 'API key')
      assert.match(unnamed.body.createdAt, ISO)
      assert.equal(unnamed.body.prefix, unnamed.body.apiKey.slice(0, 11))
      const emptyBody = await alice.post(`/api/v1/projects/${project.id}/keys`, {})
      assert.equal(emptyBody.body.name, 'API key')
      for (const rawBody of ['null', '[]', '"key"', '7']) {
        const notAnObject = await alice.post(`/api/v1/projects/${project.id}/keys`, undefined, { rawBody })
        assert.equal(notAnObject.status, 400, rawBody)
        assert.equal(notAnObject.body.error, 'Request body must be a JSON object')
      }
      const named = await alice.post(`/api/v1/projects/${project.id}/keys`, { name: ' Production ' })
      assert.equal(named.body.name, 'Production')
      assert.equal((await callApi('GET', '/payloads', named.body.apiKey)).status, 200)
      const keys = (await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys
      assert.deepEqual(
        keys.map((k: { name: string }) => k.name),
        ['Default', 'API key', 'API key', 'Production'],
      )
    })

    it('revokes a key: it gets 401 on the payload API at once; revoking again keeps the first time', async () => {
      const project = await createProject(alice, 'Rotation')
      const spare = (await alice.post(`/api/v1/projects/${project.id}/keys`, { name: 'Spare' })).body
      const keyId = (await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys[0].id
      assert.equal((await callApi('GET', '/payloads', project.apiKey)).status, 200)

      const revoked = await alice.delete(`/api/v1/projects/${project.id}/keys/${keyId}`)
      assert.equal(revoked.status, 200)
      assert.deepEqual(revoked.body, { id: keyId, revokedAt: new Date(t.clock.now()).toISOString() })
      const refused = await callApi('GET', '/payloads', project.apiKey)
      assert.equal(refused.status, 401)
      assert.deepEqual(await refused.json(), { error: 'API key has been revoked' })
      assert.equal((await callApi('GET', '/payloads', spare.apiKey)).status, 200)

      t.clock.advance(1000)
      const again = await alice.delete(`/api/v1/projects/${project.id}/keys/${keyId}`)
      assert.deepEqual(again.body, revoked.body)
      const listed = (await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys
      assert.equal(listed.find((k: { id: string }) => k.id === keyId).revokedAt, revoked.body.revokedAt)
      assert.equal(listed.find((k: { id: string }) => k.id === spare.id).revokedAt, null)

      const unknown = await alice.delete(`/api/v1/projects/${project.id}/keys/key_unknown`)
      assert.equal(unknown.status, 404)
      assert.deepEqual(unknown.body, { error: 'API key not found' })
      const other = await createProject(alice, 'Other')
      const elsewhere = await alice.delete(`/api/v1/projects/${other.id}/keys/${spare.id}`)
      assert.equal(elsewhere.status, 404)
      assert.equal((await callApi('GET', '/payloads', spare.apiKey)).status, 200)
    })

    it('keeps the 50 keys revoked last: a loop of creations and revocations grows the key list no further', async () => {
      const project = await createProject(alice, 'Churn')
      const revoked: string[] = []
      for (let i = 0; i < KEPT_REVOKED_KEYS + 5; i++) {
        t.clock.advance(10)
        const key = (await alice.post(`/api/v1/projects/${project.id}/keys`, { name: `Churn ${i}` })).body
        assert.equal((await alice.delete(`/api/v1/projects/${project.id}/keys/${key.id}`)).status, 200)
        revoked.push(key.id)
      }
      const keys = (await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys as { id: string; revokedAt: string | null }[]
      assert.equal(keys.filter((k) => k.revokedAt === null).length, 1, 'the project key, still active')
      assert.deepEqual(
        keys.filter((k) => k.revokedAt !== null).map((k) => k.id),
        revoked.slice(5),
        'the 50 revoked last, oldest first',
      )
      const rows = await t.service.ctx.storage.db.selectFrom('api_keys').select('id').where('project_id', '=', project.id).execute()
      assert.equal(rows.length, KEPT_REVOKED_KEYS + 1)
    })

    it("revoking a key forgets that key alone: another project's keys stay in this process's cache", async () => {
      const busy = await createProject(alice, 'Busy')
      const other = await createProject(alice, 'Other churn')
      assert.equal((await callApi('GET', '/payloads', busy.apiKey)).status, 200)
      // The busy project's key row is gone: only the cache can still answer for it within its 5 s.
      await t.service.ctx.storage.db.updateTable('api_keys').set({ key_hash: 'gone' }).where('project_id', '=', busy.id).execute()
      const spare = (await alice.post(`/api/v1/projects/${other.id}/keys`, { name: 'Spare' })).body
      assert.equal((await alice.delete(`/api/v1/projects/${other.id}/keys/${spare.id}`)).status, 200)
      assert.equal((await alice.delete(`/api/v1/projects/${other.id}/keys/${spare.id}`)).status, 200, 'again: changes nothing')
      assert.equal((await callApi('GET', '/payloads', busy.apiKey)).status, 200, 'answered from the cache, not looked up again')
      assert.equal((await callApi('GET', '/payloads', spare.apiKey)).status, 401)
    })

    it('filters the dashboard list by externalId, as GET /payloads does', async () => {
      const project = await createProject(alice, 'By order')
      const order = await (
        await callApi('POST', '/payloads', project.apiKey, { ...payloadBodies.signMessage, options: { externalId: 'order-7' } })
      ).json()
      await callApi('POST', '/payloads', project.apiKey, { ...payloadBodies.signMessage, options: { externalId: 'order-8' } })
      const list = await alice.get(`/api/v1/projects/${project.id}/payloads?externalId=order-7`)
      assert.equal(list.status, 200)
      assert.deepEqual(
        list.body.payloads.map((payload: { uuid: string }) => payload.uuid),
        [order.uuid],
      )
    })

    it('lists and shows payloads for the dashboard, with what was requested', async () => {
      const project = await createProject(alice, 'Payloads')
      const requested = {
        ...payloadBodies.sign,
        options: { expiresIn: 120, returnUrl: 'https://shop.example/done', customInstructions: 'Pay for order 42' },
      }
      const sign = await (await callApi('POST', '/payloads', project.apiKey, requested)).json()
      t.clock.advance(10)
      const message = await (await callApi('POST', '/payloads', project.apiKey, payloadBodies.signMessage)).json()

      const list = await alice.get(`/api/v1/projects/${project.id}/payloads`)
      assert.equal(list.status, 200)
      assert.equal(list.body.limit, 20)
      assert.equal(list.body.offset, 0)
      assert.deepEqual(
        list.body.payloads.map((p: { uuid: string }) => p.uuid),
        [message.uuid, sign.uuid],
      )
      const filtered = await alice.get(`/api/v1/projects/${project.id}/payloads?type=sign&status=pending&limit=5&offset=0`)
      assert.deepEqual(
        filtered.body.payloads.map((p: { uuid: string }) => p.uuid),
        [sign.uuid],
      )
      assert.equal((await alice.get(`/api/v1/projects/${project.id}/payloads?offset=1`)).body.payloads[0].uuid, sign.uuid)

      const detail = await alice.get(`/api/v1/projects/${project.id}/payloads/${sign.uuid}`)
      assert.equal(detail.status, 200)
      assert.deepEqual(detail.body, {
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
        transaction: payloadBodies.sign.transaction,
        message: null,
        customInstructions: 'Pay for order 42',
        returnUrl: 'https://shop.example/done',
      })
      const messageDetail = (await alice.get(`/api/v1/projects/${project.id}/payloads/${message.uuid}`)).body
      assert.equal(messageDetail.message, payloadBodies.signMessage.message)
      assert.equal(messageDetail.transaction, null)

      t.clock.advance(120_000)
      assert.equal((await alice.get(`/api/v1/projects/${project.id}/payloads/${sign.uuid}`)).body.status, 'expired')
      const missing = await alice.get(`/api/v1/projects/${project.id}/payloads/9b2f8e3c-1d4a-4f5e-8a6b-7c8d9e0f1a2b`)
      assert.equal(missing.status, 404)
      assert.deepEqual(missing.body, { error: 'Payload not found' })
      assert.equal((await alice.get(`/api/v1/projects/${project.id}/payloads/not-a-uuid`)).status, 404)
    })
  })

  describe('security', () => {
    let project: { id: string; name: string; apiKey: string }
    let keyId: string
    let payloadUuid: string
    before(async () => {
      project = await createProject(alice, 'Guarded')
      keyId = (await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys[0].id
      payloadUuid = (await (await callApi('POST', '/payloads', project.apiKey, payloadBodies.connect)).json()).uuid
    })

    const projectRoutes = () => [
      ['GET', `/api/v1/projects/${project.id}`],
      ['GET', `/api/v1/projects/${project.id}/keys`],
      ['POST', `/api/v1/projects/${project.id}/keys`],
      ['DELETE', `/api/v1/projects/${project.id}/keys/${keyId}`],
      ['GET', `/api/v1/projects/${project.id}/analytics`],
      ['GET', `/api/v1/projects/${project.id}/payloads`],
      ['GET', `/api/v1/projects/${project.id}/payloads/${payloadUuid}`],
    ]
    const send = (client: DashboardClient, method: string, path: string, options = {}) =>
      method === 'GET' ? client.get(path, options) : method === 'POST' ? client.post(path, {}, options) : client.delete(path, options)
    const keyStillWorks = async () => assert.equal((await callApi('GET', '/payloads', project.apiKey)).status, 200)

    it("bounds an account's dashboard requests at 600 a minute: a signed-in script cannot queue test deliveries without end", async () => {
      const script = await signedIn(t, 'scripted')
      const { id } = await createProject(script, 'Flooded')
      await t.service.ctx.projects.setPlan(id, 'pro')
      const hook = await script.post(`/api/v1/projects/${id}/webhooks`, { url: 'http://127.0.0.1:1/in', events: ['payload.signed'] })
      assert.equal(hook.status, 201, JSON.stringify(hook.body))
      const countDeliveries = async () =>
        (await t.service.ctx.storage.db.selectFrom('webhook_deliveries').select('id').where('project_id', '=', id).execute()).length
      let sent = 2
      const statuses: number[] = []
      while (statuses.length === 0 || statuses.at(-1) === 202) {
        const batch = await Promise.all(
          Array.from({ length: 50 }, () => script.post(`/api/v1/projects/${id}/webhooks/${hook.body.id}/test`)),
        )
        statuses.push(...batch.map((answer) => answer.status))
        sent += batch.length
        assert.ok(sent <= 700, 'refused before 700')
      }
      assert.equal(statuses.filter((status) => status === 202).length, 598, 'the project and the webhook took two of the 600')
      assert.equal(await countDeliveries(), 598)
      const refused = await script.post(`/api/v1/projects/${id}/webhooks/${hook.body.id}/test`)
      assert.equal(refused.status, 429)
      assert.match(refused.body.error, /^Too many dashboard requests for this account: at most 600 a minute; retry in \d+ s$/)
      assert.match(String(refused.headers.get('retry-after')), /^\d+$/)
      assert.equal(await countDeliveries(), 598, 'a refused request queues nothing')
      assert.equal((await alice.get('/api/v1/session')).status, 200, "another account's requests are its own")
      t.clock.advance(60_000)
      assert.equal((await script.get('/api/v1/session')).status, 200, 'a minute later')
    })

    it('caps the projects of an account (PROJECTS_PER_ACCOUNT): one sign-in cannot bring any number of Free months', async () => {
      const capped = await startTestService(dialect, { listen: true, env: { PROJECTS_PER_ACCOUNT: '3' } })
      try {
        const mallory = await signedIn(capped, 'mallory')
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => mallory.post('/api/v1/projects', { name: `Free ${i}` })))
        assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 201, 201, 409, 409, 409, 409, 409, 409, 409])
        const refused = answers.find((answer) => answer.status === 409)
        assert.equal(refused?.body.error, "An account can have at most 3 projects; ask the service's operator for more")
        assert.equal((await mallory.get('/api/v1/projects')).body.projects.length, 3)
        const other = await signedIn(capped, 'trent')
        assert.equal((await other.post('/api/v1/projects', { name: 'Shop' })).status, 201, "another account's count is its own")
      } finally {
        await capped.stop()
      }
    })

    it('caps the active keys of a project at 20, however many creations race; a revoked key frees its place', async () => {
      const { id } = await createProject(bob, 'Keyed')
      const answers = await Promise.all(Array.from({ length: 30 }, () => bob.post(`/api/v1/projects/${id}/keys`, {})))
      assert.equal(answers.filter((answer) => answer.status === 201).length, 19, 'the Default key and 19 more')
      const refused = answers.filter((answer) => answer.status === 409)
      assert.equal(refused.length, 11)
      assert.equal(refused[0]?.body.error, 'A project can have at most 20 active keys; revoke one before adding another')
      const keys = (await bob.get(`/api/v1/projects/${id}/keys`)).body.keys
      assert.equal(keys.length, 20)
      assert.equal((await bob.delete(`/api/v1/projects/${id}/keys/${keys[0].id}`)).status, 200)
      assert.equal((await bob.post(`/api/v1/projects/${id}/keys`, {})).status, 201)
      assert.equal((await bob.post(`/api/v1/projects/${id}/keys`, {})).status, 409)
    })

    it('every session endpoint is 401 without a session, with a forged one, or with an API key instead', async () => {
      const routes = [['GET', '/api/v1/session'], ['GET', '/api/v1/projects'], ['POST', '/api/v1/projects'], ...projectRoutes()]
      const anonymous = dashboardClient(t, undefined)
      const forged = dashboardClient(t, 'cs_session=0000000000000000000000000000000000000000000')
      for (const [method, path] of routes as [string, string][]) {
        for (const client of [anonymous, forged]) {
          const response = await send(client, method, path)
          assert.equal(response.status, 401, `${method} ${path}`)
          assert.match(response.body.error, /^Not signed in/)
        }
        const withKey = await send(anonymous, method, path, { headers: bearer(project.apiKey) })
        assert.equal(withKey.status, 401, `${method} ${path} with an API key`)
        const withQueryKey = await send(anonymous, method, `${path}?api_key=${project.apiKey}`)
        assert.equal(withQueryKey.status, 401, `${method} ${path} with ?api_key`)
      }
      await keyStillWorks()
    })

    it("another account's project is 404 on every endpoint, as is an unknown one", async () => {
      for (const [method, path] of projectRoutes() as [string, string][]) {
        const response = await send(bob, method, path)
        assert.equal(response.status, 404, `${method} ${path}`)
        assert.deepEqual(response.body, { error: 'Project not found' })
        const unknown = await send(alice, method, path.replace(project.id, 'proj_doesnotexist'))
        assert.deepEqual([unknown.status, unknown.body], [404, { error: 'Project not found' }], `${method} ${path}`)
      }
      await keyStillWorks()
      assert.equal((await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys.length, 1)
      assert.equal(
        (await bob.get('/api/v1/projects')).body.projects.some((p: { id: string }) => p.id === project.id),
        false,
      )
    })

    it('a change without an Origin, or from another origin, is 403 and changes nothing', async () => {
      const changes = [
        ['POST', '/api/v1/projects'],
        ['POST', `/api/v1/projects/${project.id}/keys`],
        ['DELETE', `/api/v1/projects/${project.id}/keys/${keyId}`],
      ]
      const before = (await alice.get('/api/v1/projects')).body.projects.length
      for (const [method, path] of changes as [string, string][]) {
        for (const origin of [null, 'https://evil.example', 'http://countersign.test:8080', 'https://countersign.test', 'null']) {
          const response = await send(alice, method, path, { origin })
          assert.equal(response.status, 403, `${method} ${path} from ${origin}`)
          assert.match(response.body.error, origin === null ? /^Missing Origin header/ : /may not change anything here/)
        }
      }
      assert.equal((await alice.get('/api/v1/projects')).body.projects.length, before)
      assert.equal((await alice.get(`/api/v1/projects/${project.id}/keys`)).body.keys.length, 1)
      await keyStillWorks()
      const read = await alice.get(`/api/v1/projects/${project.id}`, { origin: 'https://evil.example' })
      assert.equal(read.status, 200, 'reads need no Origin: the browser keeps their answers from other sites')
    })

    it('the session cookie does not open API-key endpoints', async () => {
      for (const [method, path] of [
        ['GET', '/api/v1/payloads'],
        ['POST', '/api/v1/payloads'],
        ['GET', `/api/v1/payloads/${payloadUuid}`],
      ]) {
        const response = await send(alice, method as string, path as string)
        assert.equal(response.status, 401, `${method} ${path}`)
      }
    })

    it('bad bodies are 422 with details; bodies that are not JSON objects are 400', async () => {
      const cases: [string, unknown, { field: string; message: string }[]][] = [
        ['/api/v1/projects', { name: '' }, [{ field: 'name', message: 'must not be empty' }]],
        ['/api/v1/projects', { name: '   ' }, [{ field: 'name', message: 'must not be empty' }]],
        ['/api/v1/projects', { name: 'x'.repeat(101) }, [{ field: 'name', message: 'must be at most 100 characters' }]],
        ['/api/v1/projects', { name: 'Line\nbreak' }, [{ field: 'name', message: 'must not contain control characters' }]],
        ['/api/v1/projects', {}, [{ field: 'name', message: 'is required' }]],
        ['/api/v1/projects', { name: 42 }, [{ field: 'name', message: 'must be a string' }]],
        ['/api/v1/projects', { name: 'Shop', plan: 'pro' }, [{ field: 'plan', message: 'is not a known field' }]],
        [`/api/v1/projects/${project.id}/keys`, { name: '' }, [{ field: 'name', message: 'must not be empty' }]],
        [`/api/v1/projects/${project.id}/keys`, { name: null }, [{ field: 'name', message: 'must be a string' }]],
        [`/api/v1/projects/${project.id}/keys`, { label: 'x' }, [{ field: 'label', message: 'is not a known field' }]],
      ]
      for (const [path, body, details] of cases) {
        const response = await alice.post(path, body)
        assert.equal(response.status, 422, `${path} ${JSON.stringify(body)}`)
        assert.deepEqual(response.body, { error: 'Validation failed', details }, `${path} ${JSON.stringify(body)}`)
      }
      assert.equal((await alice.post('/api/v1/projects', { name: 'x'.repeat(100) })).status, 201, '100 characters is allowed')
      assert.equal((await alice.post('/api/v1/projects', { name: '🦊'.repeat(100) })).status, 201, 'characters, not UTF-16 units')

      for (const rawBody of ['["Shop"]', '"Shop"', '{"name":']) {
        const response = await alice.post('/api/v1/projects', undefined, { rawBody })
        assert.equal(response.status, 400, rawBody)
      }
      const period = await alice.get(`/api/v1/projects/${project.id}/analytics?period=90d`)
      assert.equal(period.status, 422)
      assert.deepEqual(period.body.details, [{ field: 'period', message: 'must be one of 30d, 7d' }])
      const limit = await alice.get(`/api/v1/projects/${project.id}/payloads?limit=101`)
      assert.equal(limit.status, 422)
      assert.deepEqual(limit.body.details, [{ field: 'limit', message: 'must be at most 100' }])
    })
  })
})
