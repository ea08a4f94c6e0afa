import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { readCookie } from '../../../src/platform/http/cookies.js'
import { dashboardClient, signedIn } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'

it('reads one cookie from a Cookie header, whatever surrounds it', () => {
  const header = 'theme=dark; cs_session=abc_DEF-123;other=1;  cs_session_old=zzz'
  assert.equal(readCookie(header, 'cs_session'), 'abc_DEF-123')
  assert.equal(readCookie(header, 'other'), '1')
  assert.equal(readCookie(header, 'cs'), undefined)
  assert.equal(readCookie('cs_session="quoted"', 'cs_session'), 'quoted')
  // Sent twice, the cookie is ambiguous (the browser's order would decide which scope wins): neither is read.
  assert.equal(readCookie('cs_session=first; cs_session=second', 'cs_session'), undefined)
  assert.equal(readCookie('cs_session=same; cs_session=same', 'cs_session'), undefined)
  assert.equal(readCookie('novalue; cs_session=', 'cs_session'), '')
  assert.equal(readCookie(undefined, 'cs_session'), undefined)
})

forEachDatabase('cookies', (dialect) => {
  let t: TestService
  let token: string
  before(async () => {
    t = await startTestService(dialect, { listen: true })
    token = (await signedIn(t, 'cookie-reader')).cookie.replace('cs_session=', '')
  })
  after(() => t.stop())

  it('finds the session cookie among the cookies other pages of the domain set', async () => {
    const client = dashboardClient(t, `theme=dark; cs_session=${token};other=1;  cs_session_old=zzz`)
    assert.equal((await client.get('/api/v1/session')).status, 200)
  })

  it('reads neither of two session cookies: which one the browser sends first is not for the service to trust', async () => {
    assert.equal((await dashboardClient(t, `cs_session=${token}; cs_session=forged`).get('/api/v1/session')).status, 401)
    assert.equal((await dashboardClient(t, `cs_session=forged; cs_session=${token}`).get('/api/v1/session')).status, 401)
  })

  it('treats a malformed Cookie header as no session, not as an error', async () => {
    for (const cookie of ['cs_session', 'cs_session=%E0%A4%A', ';;=;', `cs_session="${token}`]) {
      const response = await dashboardClient(t, cookie).get('/api/v1/session')
      assert.equal(response.status, 401, cookie)
      assert.match(response.body.error, /^Not signed in/)
    }
  })
})
