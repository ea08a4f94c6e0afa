// Names that would hide or reorder what the signing page and the dashboard show: a project or key name with a
// direction override, an isolate, a zero-width or other invisible character is refused with 422 and creates nothing.
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'

const DECEPTIVE_NAMES: [name: string, codePoint: string][] = [
  ['Evil Shop\u202E', 'U+202E'],
  ['\u202Dpohs', 'U+202D'],
  ['Shop\u2067x', 'U+2067'],
  ['Pay\u200Bpal', 'U+200B'],
  ['Pay\u200Dpal', 'U+200D'],
  ['Shop\u200F', 'U+200F'],
  ['Sh\uFEFFop', 'U+FEFF'],
  ['Sh\u00ADop', 'U+00AD'],
  ['Shop\u2028two', 'U+2028'],
  ['Shop\u{E0041}', 'U+E0041'],
  ['Shop\u3164', 'U+3164'],
  // Default-ignorable code points outside Cf, which a font draws as nothing, and the braille blank (from a review).
  ['Example\u034FShop', 'U+034F'],
  ['Example\u17B4Shop', 'U+17B4'],
  ['Example\uFFA0Shop', 'U+FFA0'],
  ['Example\u2800Shop', 'U+2800'],
]

forEachDatabase('names with invisible or direction-changing characters', (dialect) => {
  let t: TestService
  let cookie: string
  let projectId: string
  before(async () => {
    t = await startTestService(dialect)
    const account = await t.service.ctx.accounts.recordSignIn({
      issuer: 'https://idp.example',
      subject: 'm',
      email: 'm@example.com',
      name: 'm',
    })
    cookie = `cs_session=${(await t.service.ctx.sessions.start(account.id)).token}`
    projectId = (await t.service.ctx.projects.createProject({ name: 'Shop', plan: 'pro', accountId: account.id })).project.id
  })
  after(() => t.stop())

  const post = (url: string, payload: object) =>
    t.inject({ method: 'POST', url, headers: { cookie, origin: 'http://countersign.test' }, payload })

  it('refuses them in a project name, naming the character, and creates nothing', async () => {
    for (const [name, codePoint] of DECEPTIVE_NAMES) {
      const response = await post('/api/v1/projects', { name })
      assert.equal(response.statusCode, 422, `${JSON.stringify(name)}: ${response.body}`)
      assert.deepEqual(response.json().details, [
        { field: 'name', message: `must not contain invisible or direction-changing characters (found ${codePoint})` },
      ])
    }
    const list = await t.inject({ method: 'GET', url: '/api/v1/projects', headers: { cookie } })
    assert.deepEqual(
      list.json().projects.map((p: { name: string }) => p.name),
      ['Shop'],
    )
  })

  it('refuses them in an API key name', async () => {
    for (const [name] of DECEPTIVE_NAMES) {
      const response = await post(`/api/v1/projects/${projectId}/keys`, { name })
      assert.equal(response.statusCode, 422, `${JSON.stringify(name)}: ${response.body}`)
    }
  })

  it('refuses a C1 control character (U+0085, NEXT LINE) as a control character', async () => {
    const response = await post('/api/v1/projects', { name: 'Example\u0085Shop' })
    assert.equal(response.statusCode, 422)
    assert.deepEqual(response.json().details, [{ field: 'name', message: 'must not contain control characters' }])
  })

  it("still takes names in any script, with accents, emoji and variation selectors (a Japanese name's ideographic one)", async () => {
    for (const name of [
      'Zoë & Co',
      'متجر',
      'שלום',
      '日本の店',
      'Café ☕',
      'Love \u2764\uFE0F',
      'Text \u2764\uFE0E',
      '\u845B\u{E0100}飾商店',
      '\u182A\u180B',
    ]) {
      assert.equal((await post('/api/v1/projects', { name })).statusCode, 201, name)
    }
  })
})
