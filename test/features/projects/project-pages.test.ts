// What the signing page shows of a project, as its owner sets it in the dashboard: display name, a website verified
// by a proof file it publishes (fetched by the service from a real local HTTP server), and an uploaded logo.
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type DashboardClient, signedIn } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { createPayload } from '../../support/payloads.js'
import { blankPng } from '../../support/png.js'
import { startTestService, type TestService } from '../../support/service.js'

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const pngDataUrl = `data:image/png;base64,${PNG_1X1}`
/** A JPEG segment: its marker, its length, its body. */
const segment = (marker: number, body: number[]) => Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body])
/** The header of a greyscale baseline JPEG of width x height, up to its first scan: what gives its size. */
const jpegOfSize = (width: number, height: number, strayByte = false) =>
  Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    Buffer.from(strayByte ? [0x00] : []),
    segment(0xdb, [0x00, ...Array(64).fill(1)]),
    segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    segment(0xc4, [0x00, 1, ...Array(15).fill(0), 0x00]),
    segment(0xc4, [0x10, 1, ...Array(15).fill(0), 0x00]),
    segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    Buffer.alloc(64, 0),
    Buffer.from([0xff, 0xd9]),
  ])
/**
 * A JPEG of `side` pixels a side with a stray byte after its first segment, and a 16 x 16 frame where a reader that
 * slides over the stray byte one at a time would land (the two bytes after the first length byte, read as a length).
 */
const jpegWithHiddenFrame = (side: number) => {
  const file = jpegOfSize(side, side, true)
  const decoyAt = 5 + ((0x10 << 8) | 0x4a)
  return Buffer.concat([file, Buffer.alloc(decoyAt - file.length), Buffer.from([0xff, 0xc0, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0])])
}
/** An extended WebP whose canvas is width x height (a VP8X chunk alone). */
const webpCanvas = (width: number, height: number) => {
  const chunk = Buffer.alloc(18)
  chunk.write('VP8X', 0, 'latin1')
  chunk.writeUInt32LE(10, 4)
  chunk.writeUIntLE(width - 1, 12, 3)
  chunk.writeUIntLE(height - 1, 15, 3)
  const header = Buffer.alloc(12)
  header.write('RIFF', 0, 'latin1')
  header.writeUInt32LE(4 + chunk.length, 4)
  header.write('WEBP', 8, 'latin1')
  return Buffer.concat([header, chunk])
}
/** A 1 x 1 baseline JPEG, and a 1 x 1 lossless WebP. */
const JPEG_1X1 =
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA='
const WEBP_1X1 = 'UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='

/** A website under the test's control: answers each path with what the test sets, and records what it was asked. */
class TestWebsite {
  readonly requests: string[] = []
  readonly routes = new Map<string, { status: number; body: string; headers?: Record<string, string> }>()
  private server = http.createServer((request, response) => {
    this.requests.push(request.url ?? '')
    const route = this.routes.get(request.url ?? '')
    response.writeHead(route?.status ?? 404, { 'content-type': 'text/plain', ...route?.headers })
    response.end(route?.body ?? 'not found')
  })
  origin = ''

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

const PROOF_PATH = '/.well-known/countersign-verification.txt'

forEachDatabase('project display name, website and logo', (dialect) => {
  let t: TestService
  let alice: DashboardClient
  let bob: DashboardClient
  let website: TestWebsite
  before(async () => {
    t = await startTestService(dialect, { listen: true })
    alice = await signedIn(t, 'alice')
    bob = await signedIn(t, 'bob')
    website = new TestWebsite()
    await website.start()
  })
  after(async () => {
    await website.close()
    await t.stop()
  })

  const newProject = async (client: DashboardClient, name = 'example shop') => {
    const response = await client.post('/api/v1/projects', { name })
    assert.equal(response.status, 201)
    return response.body as { id: string; apiKey: string }
  }
  const signView = async (uuid: string) => {
    const response = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })
    assert.equal(response.statusCode, 200)
    return response.json()
  }

  describe('display name', () => {
    it('is what the signing page names the project by, and clearing it brings the name back', async () => {
      const { id, apiKey } = await newProject(alice)
      const changed = await alice.patch(`/api/v1/projects/${id}`, { displayName: '  Example Shop  ' })
      assert.equal(changed.status, 200)
      assert.equal(changed.body.displayName, 'Example Shop')
      assert.equal(changed.body.name, 'example shop')
      const uuid = await createPayload(t, apiKey)
      assert.deepEqual((await signView(uuid)).project, { name: 'Example Shop' })

      assert.equal((await alice.patch(`/api/v1/projects/${id}`, { displayName: null })).body.displayName, null)
      assert.deepEqual((await signView(uuid)).project, { name: 'example shop' })
    })

    it('refuses control characters, overlong names and unknown fields with 422, and changes nothing', async () => {
      const { id } = await newProject(alice)
      await alice.patch(`/api/v1/projects/${id}`, { displayName: 'Shop' })
      for (const body of [{ displayName: 'Shop\u0007' }, { displayName: 'x'.repeat(101) }, { plan: 'pro' }, { displayName: 42 }]) {
        const response = await alice.patch(`/api/v1/projects/${id}`, body)
        assert.equal(response.status, 422, JSON.stringify(body))
      }
      const project = await alice.get(`/api/v1/projects/${id}`)
      assert.equal(project.body.displayName, 'Shop')
      assert.equal(project.body.plan, 'free')
    })

    it("cannot be changed on another account's project (404), nor without the dashboard's Origin (403)", async () => {
      const { id } = await newProject(alice)
      assert.equal((await bob.patch(`/api/v1/projects/${id}`, { displayName: 'Mallory' })).status, 404)
      assert.equal(
        (await alice.patch(`/api/v1/projects/${id}`, { displayName: 'Mallory' }, { origin: 'https://evil.example' })).status,
        403,
      )
      assert.equal((await alice.get(`/api/v1/projects/${id}`)).body.displayName, null)
    })
  })

  describe('website', () => {
    it('is kept as an origin, starts unverified, and is verified once the site publishes the proof line', async () => {
      const { id, apiKey } = await newProject(alice)
      const set = await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: `${website.origin}/shop/checkout?x=1` })
      assert.equal(set.status, 200)
      const { url, verified, verifiedAt, proofUrl, proofLine } = set.body.website
      assert.equal(url, website.origin)
      assert.equal(verified, false)
      assert.equal(verifiedAt, null)
      assert.equal(proofUrl, `${website.origin}${PROOF_PATH}`)
      assert.match(proofLine, /^countersign-verification=[\w-]{22}$/)
      const uuid = await createPayload(t, apiKey)
      assert.equal((await signView(uuid)).project.website, undefined, 'an unverified website is never shown')

      // The file is missing: not verified, and the owner is told why.
      let check = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(check.status, 200)
      assert.equal(check.body.check.verified, false)
      assert.match(check.body.check.problem, /answered HTTP 404/)

      // Another project's line only: still not verified.
      website.routes.set(PROOF_PATH, { status: 200, body: 'countersign-verification=someoneElse\n' })
      check = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(check.body.check.verified, false)
      assert.match(check.body.check.problem, /does not hold this project's line/)

      website.routes.set(PROOF_PATH, { status: 200, body: `countersign-verification=someoneElse\n  ${proofLine}  \r\n` })
      check = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(check.body.check.verified, true)
      assert.equal(check.body.project.website.verified, true)
      assert.equal(check.body.project.website.verifiedAt, new Date(t.clock.now()).toISOString())
      assert.equal((await signView(uuid)).project.website, website.origin)

      // The same origin again keeps the verification; the proof removed, the next check takes the mark away.
      assert.equal((await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: `${website.origin}/` })).body.website.verified, true)
      website.routes.delete(PROOF_PATH)
      check = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(check.body.check.verified, false)
      assert.equal((await signView(uuid)).project.website, undefined)
    })

    it('starts over with a new proof line when the website changes', async () => {
      const { id, apiKey } = await newProject(alice)
      const first = (await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: website.origin })).body.website
      website.routes.set(PROOF_PATH, { status: 200, body: first.proofLine })
      assert.equal((await alice.post(`/api/v1/projects/${id}/website/verify`)).body.check.verified, true)

      const other = `http://localhost:${new URL(website.origin).port}`
      const moved = (await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: other })).body.website
      assert.equal(moved.url, other)
      assert.equal(moved.verified, false)
      assert.notEqual(moved.proofLine, first.proofLine, 'a proof published for one site does not carry over to another')
      assert.equal((await signView(await createPayload(t, apiKey))).project.website, undefined)
    })

    it('does not follow a redirect to a proof elsewhere', async () => {
      const { id } = await newProject(alice)
      const { proofLine } = (await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: website.origin })).body.website
      website.routes.set('/elsewhere.txt', { status: 200, body: proofLine })
      website.routes.set(PROOF_PATH, { status: 302, body: '', headers: { location: '/elsewhere.txt' } })
      const check = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(check.body.check.verified, false)
      assert.match(check.body.check.problem, /redirect to \/elsewhere\.txt not followed/)
      assert.ok(!website.requests.includes('/elsewhere.txt'))
    })

    it('checks a website at most 6 times a minute per project: a script cannot have the service send request after request to a host', async () => {
      const { id } = await newProject(alice)
      const other = await newProject(alice)
      for (const project of [id, other.id]) await alice.patch(`/api/v1/projects/${project}`, { websiteUrl: website.origin })
      const sentBefore = website.requests.length
      const answers = await Promise.all(Array.from({ length: 10 }, () => alice.post(`/api/v1/projects/${id}/website/verify`)))
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 200, 200, 200, 200, 200, 429, 429, 429, 429])
      const refused = answers.find((answer) => answer.status === 429)
      assert.match(refused?.body.error, /^Too many website checks for this project: at most 6 a minute; retry in \d+ s$/)
      assert.match(String(refused?.headers.get('retry-after')), /^\d+$/)
      assert.equal(website.requests.length - sentBefore, 6, 'only the checks allowed reached the website')
      assert.equal((await alice.post(`/api/v1/projects/${other.id}/website/verify`)).status, 200, "another project's checks are its own")
      t.clock.advance(60_000)
      assert.equal((await alice.post(`/api/v1/projects/${id}/website/verify`)).status, 200, 'a minute later')
    })

    it('refuses what is not an absolute http(s) URL with 422, and verifying without a website', async () => {
      const { id } = await newProject(alice)
      for (const websiteUrl of ['shop.example', 'javascript:alert(1)', 'ftp://shop.example', 'https://user:pw@shop.example']) {
        const response = await alice.patch(`/api/v1/projects/${id}`, { websiteUrl })
        assert.equal(response.status, 422, websiteUrl)
        assert.equal(response.body.details[0].field, 'websiteUrl')
      }
      const verify = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(verify.status, 422)
      assert.equal((await alice.get(`/api/v1/projects/${id}`)).body.website, null)
    })
  })

  describe('payload search', () => {
    it('finds a payload by its uuid or its first characters, by signer address and by externalId; a wildcard finds nothing', async () => {
      const { id, apiKey } = await newProject(alice)
      const uuids = [
        await createPayload(t, apiKey),
        await createPayload(t, apiKey),
        await createPayload(t, apiKey, { ...payloadBodies.sign, options: { externalId: 'order-42' } }),
      ]
      const signer = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'
      await t.service.ctx.payloads.resolveSigned(uuids[1] as string, {
        walletAdapter: 'xaman',
        signerAddress: signer,
        txHash: 'AB',
        txBlob: 'CD',
      })
      const search = async (q: string) => {
        const response = await alice.get(`/api/v1/projects/${id}/payloads?q=${encodeURIComponent(q)}`)
        assert.equal(response.status, 200)
        return response.body.payloads.map((payload: { uuid: string }) => payload.uuid)
      }
      assert.deepEqual(await search(uuids[0] as string), [uuids[0]])
      assert.deepEqual(await search((uuids[2] as string).slice(0, 8).toUpperCase()), [uuids[2]])
      assert.deepEqual(await search(` ${signer} `), [uuids[1]])
      assert.deepEqual(await search('order-42'), [uuids[2]], 'by externalId, exactly')
      assert.deepEqual(await search('order-4'), [])
      for (const q of ['%', '____', 'nothing like it', 'abc']) assert.deepEqual(await search(q), [], q)
      assert.equal((await alice.get(`/api/v1/projects/${id}/payloads?q=${'a'.repeat(201)}`)).status, 422)
      // Another account's payloads are never found, even by their exact uuid.
      const other = await newProject(bob)
      assert.equal((await bob.get(`/api/v1/projects/${other.id}/payloads?q=${uuids[0]}`)).body.payloads.length, 0)
    })
  })

  describe('logo', () => {
    it('is uploaded as a data URL, linked from the signing page and served as an image that can run nothing', async () => {
      const { id, apiKey } = await newProject(alice)
      const uploaded = await alice.put(`/api/v1/projects/${id}/logo`, { image: pngDataUrl })
      assert.equal(uploaded.status, 200)
      assert.match(uploaded.body.logoUrl, new RegExp(`^/logos/${id}/[0-9a-f]{64}$`))
      assert.equal((await signView(await createPayload(t, apiKey))).project.logoUrl, uploaded.body.logoUrl)

      const served = await fetch(`${t.url}${uploaded.body.logoUrl}`)
      assert.equal(served.status, 200)
      assert.equal(served.headers.get('content-type'), 'image/png')
      assert.equal(served.headers.get('x-content-type-options'), 'nosniff')
      assert.equal(served.headers.get('content-security-policy'), "default-src 'none'; sandbox")
      assert.match(served.headers.get('cache-control') ?? '', /immutable/)
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), Buffer.from(PNG_1X1, 'base64'))

      // A new logo is a new URL; the old one is gone.
      const replaced = await alice.put(`/api/v1/projects/${id}/logo`, { image: `data:image/jpeg;base64,${JPEG_1X1}` })
      assert.notEqual(replaced.body.logoUrl, uploaded.body.logoUrl)
      assert.equal((await fetch(`${t.url}${uploaded.body.logoUrl}`)).status, 404)
      assert.equal((await fetch(`${t.url}${replaced.body.logoUrl}`)).headers.get('content-type'), 'image/jpeg')

      const removed = await alice.delete(`/api/v1/projects/${id}/logo`)
      assert.equal(removed.body.logoUrl, null)
      assert.equal((await fetch(`${t.url}${replaced.body.logoUrl}`)).status, 404)
    })

    it('refuses an HTML page or an SVG posing as a logo, so that no script can be stored and served from the service', async () => {
      const { id } = await newProject(alice)
      const html = Buffer.from('<html><script>alert(document.cookie)</script></html>').toString('base64')
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').toString('base64')
      for (const image of [`data:image/png;base64,${html}`, `data:image/svg+xml;base64,${svg}`, `data:text/html;base64,${html}`]) {
        const response = await alice.put(`/api/v1/projects/${id}/logo`, { image })
        assert.equal(response.status, 422, image.slice(0, 30))
        assert.equal(response.body.details[0].field, 'image')
      }
      const mislabelled = await alice.put(`/api/v1/projects/${id}/logo`, { image: `data:image/webp;base64,${PNG_1X1}` })
      assert.equal(mislabelled.status, 422)
      assert.match(mislabelled.body.details[0].message, /declared image\/webp but its bytes are image\/png/)
      assert.equal((await alice.get(`/api/v1/projects/${id}`)).body.logoUrl, null)
    })

    it('refuses a picture whose size cannot be read, or one too large to show: a decompression bomb of 33 KB', async () => {
      const { id } = await newProject(alice)
      const put = (type: string, bytes: Buffer) =>
        alice.put(`/api/v1/projects/${id}/logo`, { image: `data:${type};base64,${bytes.toString('base64')}` })
      // The signature alone, or followed by filler: no header gives a size.
      for (const bytes of [Buffer.from([0xff, 0xd8, 0xff]), Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)])]) {
        const headless = await put('image/jpeg', bytes)
        assert.equal(headless.status, 422)
        assert.deepEqual(headless.body.details, [
          { field: 'image', message: 'is not a whole image/jpeg image: its size in pixels cannot be read' },
        ])
      }
      // A decoy: a decoder skips the stray byte after the first segment and reads a frame of 16,384 pixels a side; a
      // lenient reader slides over it and finds a small frame placed after the end of the image.
      const hidden = await put('image/jpeg', jpegWithHiddenFrame(16_384))
      assert.equal(hidden.status, 422)
      assert.deepEqual(hidden.body.details, [
        { field: 'image', message: 'is not a whole image/jpeg image: its size in pixels cannot be read' },
      ])
      const large = await put('image/jpeg', jpegOfSize(16_384, 16_384))
      assert.deepEqual(large.body.details, [{ field: 'image', message: 'must be at most 2048 x 2048 pixels (this one is 16384 x 16384)' }])
      const canvas = await put('image/webp', webpCanvas(16_384, 16_384))
      assert.deepEqual(canvas.body.details, [{ field: 'image', message: 'must be at most 2048 x 2048 pixels (this one is 16384 x 16384)' }])
      // 16,384 pixels a side, which a browser holds as a gigabyte, in a file far under the 100 KB limit.
      const bomb = blankPng(16_384, 16_384)
      assert.ok(bomb.length < 40 * 1024, `${bomb.length} bytes`)
      const refused = await put('image/png', bomb)
      assert.equal(refused.status, 422)
      assert.deepEqual(refused.body.details, [
        { field: 'image', message: 'must be at most 2048 x 2048 pixels (this one is 16384 x 16384)' },
      ])
      assert.equal((await put('image/png', blankPng(2048, 2049))).status, 422)
      assert.equal((await alice.get(`/api/v1/projects/${id}`)).body.logoUrl, null)
      // At the limit, and each kind of picture, taken.
      assert.equal((await put('image/png', blankPng(2048, 2048))).status, 200)
      assert.equal((await put('image/webp', Buffer.from(WEBP_1X1, 'base64'))).status, 200)
      assert.equal((await put('image/jpeg', Buffer.from(JPEG_1X1, 'base64'))).status, 200)
      assert.equal((await put('image/jpeg', jpegOfSize(2048, 16))).status, 200)
    })

    it('refuses a logo over 100 KB (422) and a body far over it (413)', async () => {
      const { id } = await newProject(alice)
      const big = Buffer.concat([Buffer.from(PNG_1X1, 'base64'), Buffer.alloc(101 * 1024)])
      const tooBig = await alice.put(`/api/v1/projects/${id}/logo`, { image: `data:image/png;base64,${big.toString('base64')}` })
      assert.equal(tooBig.status, 422)
      assert.match(tooBig.body.details[0].message, /at most 100 KB/)
      const huge = await alice.put(`/api/v1/projects/${id}/logo`, { image: `data:image/png;base64,${'A'.repeat(400_000)}` })
      assert.equal(huge.status, 413)
      assert.equal(huge.body.error, 'Request body is too large (the limit is 204800 bytes)', "the route's own limit, not the API's 64 KB")
    })

    it("cannot be set on another account's project, and a logo URL with a wrong hash is 404", async () => {
      const { id } = await newProject(alice)
      assert.equal((await bob.put(`/api/v1/projects/${id}/logo`, { image: pngDataUrl })).status, 404)
      const { logoUrl } = (await alice.put(`/api/v1/projects/${id}/logo`, { image: pngDataUrl })).body
      assert.equal((await fetch(`${t.url}${logoUrl.replace(/.$/, (c: string) => (c === '0' ? '1' : '0'))}`)).status, 404)
      assert.equal((await fetch(`${t.url}/logos/${id}/not-a-hash`)).status, 404)
    })
  })
})

describe('a website check on a service that keeps to public targets', () => {
  let t: TestService
  let alice: DashboardClient
  let website: TestWebsite
  before(async () => {
    t = await startTestService('sqlite', { listen: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } })
    alice = await signedIn(t, 'alice')
    website = new TestWebsite()
    await website.start()
  })
  after(async () => {
    await website.close()
    await t.stop()
  })

  it('wants https', async () => {
    const { id } = (await alice.post('/api/v1/projects', { name: 'Shop' })).body
    const response = await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: 'http://shop.example' })
    assert.equal(response.status, 422)
    assert.match(response.body.details[0].message, /must use https/)
  })

  it('never connects to the service host or its private network, by address or by a name that resolves there', async () => {
    const { id } = (await alice.post('/api/v1/projects', { name: 'Shop' })).body
    const port = new URL(website.origin).port
    for (const target of [`https://127.0.0.1:${port}`, `https://localhost:${port}`, 'https://169.254.169.254']) {
      assert.equal((await alice.patch(`/api/v1/projects/${id}`, { websiteUrl: target })).status, 200)
      const check = await alice.post(`/api/v1/projects/${id}/website/verify`)
      assert.equal(check.status, 200)
      assert.equal(check.body.check.verified, false)
      assert.match(check.body.check.problem, /refused to connect to .*(loopback|metadata|does not resolve to a public address)/, target)
    }
    assert.deepEqual(website.requests, [], 'the local server was never asked')
  })
})
