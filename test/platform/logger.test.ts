// The logger hides secrets wherever a careless log call puts them: the request's credentials and cookies, and an API
// key or a secret anywhere in a line's fields (plain objects and lists), in a logged error, or bound to a child logger.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { createLogger } from '../../src/platform/logger.js'

const API_KEY = 'cs_live_0123456789abcdefghij'
const SECRET = 'whsec_0123456789abcdefghij'

function capture() {
  const lines: string[] = []
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) })
  return { logger, lines, all: () => lines.join('') }
}

it('hides the request credentials and the cookies set in the answer', () => {
  const { logger, all } = capture()
  logger.info(
    { req: { method: 'GET', headers: { authorization: `Bearer ${API_KEY}`, cookie: `session=${SECRET}`, host: 'a.example' } } },
    'in',
  )
  logger.info({ res: { statusCode: 200, headers: { 'set-cookie': [`session=${SECRET}`] } } }, 'out')
  assert.equal(all().includes(API_KEY), false)
  assert.equal(all().includes(SECRET), false)
  const [request, response] = all()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  assert.deepEqual(request.req, { method: 'GET', headers: { authorization: '[redacted]', cookie: '[redacted]', host: 'a.example' } })
  assert.deepEqual(response.res, { statusCode: 200, headers: { 'set-cookie': '[redacted]' } })
})

it('hides an API key or a secret in any object at the top of a line, and leaves the object logged untouched', () => {
  const { logger, lines } = capture()
  const project = { id: 'proj_1', apiKey: API_KEY }
  const webhook = { id: 'wh_1', secret: SECRET, url: 'https://a.example/hook' }
  logger.info({ project, webhook, count: 2 }, 'created')
  const line = JSON.parse(lines[0] ?? '')
  assert.deepEqual(line.project, { id: 'proj_1', apiKey: '[redacted]' })
  assert.deepEqual(line.webhook, { id: 'wh_1', secret: '[redacted]', url: 'https://a.example/hook' })
  assert.equal(line.count, 2)
  assert.equal(project.apiKey, API_KEY, 'the caller’s object is not changed')
  assert.equal(webhook.secret, SECRET)
})

it('hides an API key or a secret logged at the top of a line, in a list, or deep in plain objects', () => {
  const { logger, lines } = capture()
  const keys = [{ id: 'key_1', apiKey: API_KEY }]
  logger.info({ apiKey: API_KEY, secret: SECRET }, 'at the top')
  logger.info({ keys, webhooks: [[{ secret: SECRET }]] }, 'in lists')
  logger.info({ project: { settings: { webhook: { secret: SECRET } } } }, 'deep')
  logger.info('interpolated %o', { apiKey: API_KEY })
  assert.equal(lines.length, 4)
  assert.equal(lines.join('').includes(API_KEY), false)
  assert.equal(lines.join('').includes(SECRET), false)
  const [top, inLists, deep] = lines.map((line) => JSON.parse(line))
  assert.equal(top.apiKey, '[redacted]')
  assert.deepEqual(inLists.keys, [{ id: 'key_1', apiKey: '[redacted]' }])
  assert.deepEqual(inLists.webhooks, [[{ secret: '[redacted]' }]])
  assert.deepEqual(deep.project, { settings: { webhook: { secret: '[redacted]' } } })
  assert.equal(keys[0]?.apiKey, API_KEY, 'the caller’s objects are not changed')
})

it("hides an API key or a secret in an error's cause, in an AggregateError's errors, and in an error inside an error", () => {
  const { logger, lines } = capture()
  logger.error({ err: new Error('outer', { cause: Object.assign(new Error('inner'), { apiKey: API_KEY }) }) }, 'cause')
  logger.error({ err: Object.assign(new Error('outer'), { cause: { webhook: { secret: SECRET } } }) }, 'plain cause')
  logger.error({ err: new AggregateError([Object.assign(new Error('one'), { apiKey: API_KEY })], 'all') }, 'aggregate')
  logger.error({ err: Object.assign(new Error('outer'), { inner: Object.assign(new Error('inner'), { secret: SECRET }) }) }, 'inner')
  assert.equal(lines.length, 4)
  assert.equal(lines.join('').includes(API_KEY), false)
  assert.equal(lines.join('').includes(SECRET), false)
  assert.match(JSON.parse(lines[0] ?? '').err.stack, /outer/)
})

it('writes a line whose object has a getter that throws beside a secret: the secret hidden, the log call not thrown', () => {
  const { logger, lines } = capture()
  const value: Record<string, unknown> = { apiKey: API_KEY, nested: { secret: SECRET } }
  Object.defineProperty(value, 'broken', {
    enumerable: true,
    get() {
      throw new Error('getter threw')
    },
  })
  logger.info({ value }, 'odd')
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  logger.info({ proxy, key: { apiKey: API_KEY } }, 'unreadable')
  assert.equal(lines.join('').includes(API_KEY), false)
  assert.equal(lines.join('').includes(SECRET), false)
  assert.equal(lines.length, 2)
})

it('writes an object that refers to itself once, with its secret hidden', () => {
  const { logger, lines } = capture()
  const project: Record<string, unknown> = { id: 'proj_1', apiKey: API_KEY }
  for (let i = 0; i < 40; i++) project[`self${i}`] = project
  const shared = { secret: SECRET }
  logger.info({ project, a: shared, b: [shared, shared] }, 'cyclic')
  assert.equal(lines.length, 1)
  assert.equal(lines[0]?.includes(API_KEY), false)
  assert.equal(lines[0]?.includes(SECRET), false)
  const line = JSON.parse(lines[0] ?? '')
  assert.equal(line.project.apiKey, '[redacted]')
  assert.equal(line.project.self0, '[Circular]')
  assert.deepEqual(line.b, [{ secret: '[redacted]' }, { secret: '[redacted]' }])
})

it('hides a secret of an object met deep in the line first and then near its top', () => {
  const { logger, lines } = capture()
  const shared = { inner: { apiKey: API_KEY } }
  logger.info({ deep: { a: { b: { c: { d: { e: { f: { g: shared } } } } } } }, shared }, 'shared')
  assert.deepEqual(JSON.parse(lines[0] ?? '').shared, { inner: { apiKey: '[redacted]' } })
})

it('hides an API key carried by a logged error, and keeps its message and stack', () => {
  const { logger, lines } = capture()
  const err = Object.assign(new Error('could not deliver'), { apiKey: API_KEY })
  logger.error({ err }, 'failed')
  assert.equal(lines.join('').includes(API_KEY), false)
  const line = JSON.parse(lines[0] ?? '')
  assert.equal(line.err.message, 'could not deliver')
  assert.equal(line.err.apiKey, '[redacted]')
  assert.match(line.err.stack, /could not deliver/)
  assert.equal(err.apiKey, API_KEY)
})

it('hides an API key or a secret bound to a child logger', () => {
  const { logger, lines } = capture()
  logger.child({ key: { prefix: 'cs_live_0123', apiKey: API_KEY } }).info('bound')
  assert.equal(lines.join('').includes(API_KEY), false)
  assert.deepEqual(JSON.parse(lines[0] ?? '').key, { prefix: 'cs_live_0123', apiKey: '[redacted]' })
})

it('hides an API key in an object interpolated into the message, and in bindings set later', () => {
  const { logger, lines } = capture()
  logger.info('created %o', { project: { apiKey: API_KEY } })
  logger.info({ n: 1 }, 'created %j', { webhook: { secret: SECRET } })
  const child = logger.child({ reqId: 'r1' })
  child.setBindings({ key: { apiKey: API_KEY } })
  child.info('bound later')
  assert.equal(lines.length, 3)
  assert.equal(lines.join('').includes(API_KEY), false)
  assert.equal(lines.join('').includes(SECRET), false)
})

it('logs an object whose hidden getter throws, as it did before, instead of throwing', () => {
  const { logger, lines } = capture()
  const value = Object.defineProperty({ apiKey: API_KEY, id: 1 }, 'broken', {
    get() {
      throw new Error('getter threw')
    },
    enumerable: false,
  })
  logger.info({ value }, 'odd')
  assert.deepEqual(JSON.parse(lines[0] ?? '').value, { apiKey: '[redacted]', id: 1 })
})
