// Attacks with input a database cannot store or a query cannot use: numbers past any real page, and NUL characters,
// which PostgreSQL refuses in text. Each must be a 4xx naming the field, never a 500, on both databases.
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { MAX_DETAILS } from '../../../src/platform/http/errors.js'
import { forEachDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

const HUGE_NUMBERS = ['99999999999999999999', '1e309', '9007199254740993', '-99999999999999999999', '1e20']

forEachDatabase('input a database cannot take', (dialect) => {
  let t: TestService
  let apiKey: string
  let projectId: string
  let cookie: string
  let webhookId: string
  before(async () => {
    t = await startTestService(dialect)
    const account = await t.service.ctx.accounts.recordSignIn({
      issuer: 'https://idp.example',
      subject: 'mallory',
      email: 'm@example.com',
      name: 'm',
    })
    cookie = `cs_session=${(await t.service.ctx.sessions.start(account.id)).token}`
    const { project, key } = await t.service.ctx.projects.createProject({ name: 'Shop', plan: 'pro', accountId: account.id })
    projectId = project.id
    apiKey = key.apiKey
    const webhook = await t.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(apiKey),
      payload: { url: 'http://127.0.0.1:9/hook' },
    })
    webhookId = webhook.json().id
  })
  after(() => t.stop())

  const session = () => ({ cookie, origin: 'http://countersign.test' })

  it('answers a body of 30,000 wrong items (60 KB) with the first 50 distinct problems, not one detail an item found pairwise', async () => {
    // Each of the 30,000 items breaks the schema: listing them all, deduplicated pair by pair, held the process for seconds.
    const attacks = [
      { url: '/api/v1/webhooks', headers: () => bearer(apiKey), payload: { url: 'http://127.0.0.1:9/', events: Array(30_000).fill(0) } },
      {
        url: `/api/v1/projects/${projectId}/webhooks`,
        headers: session,
        payload: { url: 'http://127.0.0.1:9/', events: Array(30_000).fill(0) },
      },
      { url: '/api/v1/payloads', headers: () => bearer(apiKey), payload: { type: 'connect', options: { signers: Array(30_000).fill(0) } } },
    ]
    for (const attack of attacks) {
      const response = await t.inject({ method: 'POST', url: attack.url, headers: attack.headers(), payload: attack.payload })
      assert.equal(response.statusCode, 422, `${attack.url}: ${response.body.slice(0, 200)}`)
      const { details } = response.json()
      assert.ok(details.length > 0 && details.length <= MAX_DETAILS, `${attack.url}: ${details.length} details`)
      assert.ok(response.body.length < 10_000, `${attack.url}: an answer of ${response.body.length} bytes`)
    }
  })

  it('refuses a page offset or limit past any real list with 422 naming it, on every list', async () => {
    const lists = [
      { url: '/api/v1/payloads', headers: () => bearer(apiKey) },
      { url: `/api/v1/webhooks/${webhookId}/deliveries`, headers: () => bearer(apiKey) },
      { url: `/api/v1/projects/${projectId}/payloads`, headers: session },
      { url: `/api/v1/projects/${projectId}/webhooks/${webhookId}/deliveries`, headers: session },
    ]
    for (const list of lists) {
      for (const field of ['offset', 'limit']) {
        for (const value of HUGE_NUMBERS) {
          const response = await t.inject({ method: 'GET', url: `${list.url}?${field}=${value}`, headers: list.headers() })
          assert.equal(response.statusCode, 422, `${list.url}?${field}=${value}: ${response.body}`)
          assert.ok(
            response.json().details.some((d: { field: string }) => d.field === field),
            `${list.url}?${field}=${value} does not name ${field}: ${response.body}`,
          )
        }
      }
    }
  })

  it('refuses huge numbers in a payload body with a 4xx, and creates nothing', async () => {
    const bodies = [
      '{"type":"sign","transaction":{"TransactionType":"Payment","Destination":"rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe","Amount":"1000000"},"options":{"expiresIn":1e309}}',
      '{"type":"sign","transaction":{"TransactionType":"Payment","Destination":"rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe","Amount":"1000000"},"options":{"expiresIn":99999999999999999999}}',
      '{"type":"sign","transaction":{"TransactionType":"Payment","Destination":"rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe","Amount":"1000000","Sequence":1e309}}',
      '{"type":"sign","transaction":{"TransactionType":"Payment","Destination":"rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe","Amount":99999999999999999999}}',
      '{"type":"sign","transaction":{"TransactionType":"Payment","Destination":"rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe","Amount":"1000000","Fee":"99999999999999999999"}}',
      '{"type":"sign","transaction":{"TransactionType":"Payment","Destination":"rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe","Amount":"1000000","LastLedgerSequence":-1e309}}',
      '{"type":"connect","options":{"metadata":{"n":1e309}}}',
    ]
    for (const body of bodies) {
      const response = await t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        payload: body,
      })
      assert.ok(response.statusCode >= 400 && response.statusCode < 500, `${body}: ${response.statusCode} ${response.body}`)
    }
    const list = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
    assert.deepEqual(list.json().payloads, [])
  })

  it('refuses NUL in every text field of a payload with 422 naming the field, and creates nothing', async () => {
    const bodies: [string, object][] = [
      ['options.customInstructions', { ...payloadBodies.sign, options: { customInstructions: 'Pay\u0000 now' } }],
      ['options.returnUrl', { ...payloadBodies.sign, options: { returnUrl: 'https://shop.example/\u0000done' } }],
      ['options.externalId', { ...payloadBodies.sign, options: { externalId: 'order\u00001' } }],
      ['message', { type: 'signMessage', message: 'Log in\u0000' }],
    ]
    for (const [field, body] of bodies) {
      const response = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })
      assert.equal(response.statusCode, 422, `${field}: ${response.body}`)
      assert.ok(
        response.json().details.some((d: { field: string }) => d.field === field),
        `${field} not named: ${response.body}`,
      )
    }
    const list = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
    assert.deepEqual(list.json().payloads, [])
  })

  it('refuses a lone UTF-16 surrogate in a value or a key with 422 naming it, where it was stored as U+FFFD, and creates nothing', async () => {
    // Sent as JSON escapes: the body's bytes are well-formed UTF-8, the parsed strings are not.
    const transaction = JSON.stringify(payloadBodies.sign.transaction)
    const attacks: [string, string, string][] = [
      ['message', '/api/v1/payloads', '{"type":"signMessage","message":"hi\\ud800"}'],
      [
        'options.metadata.note',
        '/api/v1/payloads',
        `{"type":"sign","transaction":${transaction},"options":{"metadata":{"note":"\\udfff"}}}`,
      ],
      [
        'options.metadata.k\\ud800',
        '/api/v1/payloads',
        `{"type":"sign","transaction":${transaction},"options":{"metadata":{"k\\ud800":"v"}}}`,
      ],
      [
        'options.customInstructions',
        '/api/v1/payloads',
        `{"type":"sign","transaction":${transaction},"options":{"customInstructions":"a\\ud83d b"}}`,
      ],
      ['url', '/api/v1/webhooks', '{"url":"http://127.0.0.1:9/\\ud800"}'],
    ]
    for (const [field, url, body] of attacks) {
      const response = await t.inject({
        method: 'POST',
        url,
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        payload: body,
      })
      assert.equal(response.statusCode, 422, `${body}: ${response.body}`)
      assert.deepEqual(response.json().details, [
        { field, message: 'must not contain a lone UTF-16 surrogate (an unpaired \\uD800 to \\uDFFF)' },
      ])
    }
    const list = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
    assert.deepEqual(list.json().payloads, [])
    // A pair is a character: an emoji sent as escapes is taken (in a project of its own: the tests here create nothing).
    const { apiKey: other } = await t.createProject('pro')
    const paired = await t.inject({
      method: 'POST',
      url: '/api/v1/payloads',
      headers: { ...bearer(other), 'content-type': 'application/json' },
      payload: '{"type":"signMessage","message":"hi \\ud83d\\ude00"}',
    })
    assert.equal(paired.statusCode, 201, paired.body)
    const page = await t.inject({ method: 'GET', url: `/api/v1/sign/${paired.json().uuid}` })
    assert.equal(page.json().message, 'hi 😀', page.body)
  })

  it('refuses NUL in a webhook URL, a project name, a key name and a query filter', async () => {
    const attempts: { field: string; method: 'GET' | 'POST'; url: string; headers: Record<string, string>; payload?: object }[] = [
      {
        field: 'url',
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(apiKey),
        payload: { url: 'http://127.0.0.1:9/\u0000' },
      },
      { field: 'name', method: 'POST', url: '/api/v1/projects', headers: session(), payload: { name: 'Evil\u0000Corp' } },
      { field: 'name', method: 'POST', url: `/api/v1/projects/${projectId}/keys`, headers: session(), payload: { name: 'k\u0000' } },
      { field: 'externalId', method: 'GET', url: '/api/v1/payloads?externalId=a%00b', headers: bearer(apiKey) },
      {
        field: 'url',
        method: 'POST',
        url: `/api/v1/projects/${projectId}/webhooks`,
        headers: session(),
        payload: { url: 'http://127.0.0.1:9/\u0000' },
      },
    ]
    for (const attempt of attempts) {
      const response = await t.inject({ method: attempt.method, url: attempt.url, headers: attempt.headers, payload: attempt.payload })
      assert.equal(response.statusCode, 422, `${attempt.url}: ${response.body}`)
      assert.ok(
        response.json().details.some((d: { field: string }) => d.field === attempt.field),
        `${attempt.url}: ${attempt.field} not named: ${response.body}`,
      )
    }
  })

  it('refuses a body nested thousands of levels deep (metadata, any field, with an Idempotency-Key) with 422, never a 500', async () => {
    const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
    const transaction = JSON.stringify(payloadBodies.sign.transaction)
    const attacks = [
      { url: '/api/v1/payloads', body: `{"type":"sign","transaction":${transaction},"options":{"metadata":{"a":${nest(5000)}}}}` },
      { url: '/api/v1/payloads', body: `{"type":"sign","transaction":${transaction},"x":${nest(20000)}}`, key: 'deep-1' },
      { url: '/api/v1/payloads', body: `{"type":"connect","options":{"metadata":{"a":${nest(40)}}}}` },
      { url: '/api/v1/webhooks', body: `{"url":"http://127.0.0.1:9/hook","events":${nest(20000)}}`, key: 'deep-2' },
    ]
    for (const { url, body, key } of attacks) {
      const response = await t.inject({
        method: 'POST',
        url,
        headers: { ...bearer(apiKey), 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
        payload: body,
      })
      assert.equal(response.statusCode, 422, `${url} ${body.slice(0, 80)}: ${response.body}`)
      assert.deepEqual(response.json().details, [{ field: 'body', message: 'must not nest objects and arrays more than 32 levels deep' }])
    }
    const list = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
    assert.deepEqual(list.json().payloads, [])
    // Brackets inside strings open nothing, and real depth up to the limit is accepted.
    const fine = await t.inject({
      method: 'POST',
      url: '/api/v1/payloads',
      headers: bearer(apiKey),
      payload: { type: 'connect', options: { metadata: { note: '[[[[{{{{'.repeat(200), a: JSON.parse(nest(28)) } } },
    })
    assert.equal(fine.statusCode, 201, fine.body)
  })
})
