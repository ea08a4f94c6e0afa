import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { dashboardClient, signedIn } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'

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

  it('takes the first of two session cookies, as the browser sends the most specific first', async () => {
    assert.equal((await dashboardClient(t, `cs_session=${token}; cs_session=forged`).get('/api/v1/session')).status, 200)
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
