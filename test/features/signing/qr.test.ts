// GET /sign/{uuid}/qr.svg: decoded by an independent QR reader, the code is the payload's signing URL.
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import jsqr from 'jsqr'
import { forEachDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { createPayload } from '../../support/payloads.js'
import { startTestService, type TestService } from '../../support/service.js'

const SCALE = 4

/**
 * Rasterises the SVG as a viewer would, for the QR reader: qrcode draws a white square, then the dark modules as
 * horizontal strokes of one module's height, in a path of absolute (M) and relative (m, h) moves.
 */
function rasterise(svg: string): { data: Uint8ClampedArray; width: number; height: number } {
  const viewBox = /viewBox="0 0 (\d+) (\d+)"/.exec(svg)
  assert.ok(viewBox, 'the SVG has a viewBox')
  const size = Number(viewBox[1])
  const dark = Array.from({ length: size }, () => new Array<boolean>(size).fill(false))
  const path = /<path stroke="#000000" d="([^"]+)"/.exec(svg)
  assert.ok(path, 'the SVG draws its dark modules as one stroked path')
  let x = 0
  let y = 0
  for (const [, command, args] of (path[1] as string).matchAll(/([MmHh])([^MmHh]*)/g)) {
    const numbers = (args as string)
      .trim()
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number)
    if (command === 'M') [x, y] = numbers as [number, number]
    else if (command === 'm') {
      x += numbers[0] as number
      y += numbers[1] as number
    } else if (command === 'h') {
      const length = numbers[0] as number
      for (let i = 0; i < length; i++) (dark[Math.floor(y)] as boolean[])[x + i] = true
      x += length
    }
  }
  const width = size * SCALE
  const data = new Uint8ClampedArray(width * width * 4)
  for (let py = 0; py < width; py++) {
    for (let px = 0; px < width; px++) {
      const value = dark[Math.floor(py / SCALE)]?.[Math.floor(px / SCALE)] ? 0 : 255
      data.set([value, value, value, 255], (py * width + px) * 4)
    }
  }
  return { data, width, height: width }
}

forEachDatabase('signing URL QR code', (dialect) => {
  let t: TestService
  let apiKey: string
  before(async () => {
    t = await startTestService(dialect)
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(() => t.stop())

  it('serves the signing URL as an SVG QR code, without an API key', async () => {
    const uuid = await createPayload(t, apiKey, payloadBodies.signMessage)
    const response = await t.inject({ method: 'GET', url: `/sign/${uuid}/qr.svg` })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.headers['content-type'], 'image/svg+xml; charset=utf-8')
    assert.match(response.headers['content-security-policy'] as string, /default-src 'none'/)
    assert.equal(response.headers['x-content-type-options'], 'nosniff')
    assert.match(response.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    assert.doesNotMatch(response.body, /<script|href=|on\w+=/i, 'nothing in it runs or loads')

    const { data, width, height } = rasterise(response.body)
    // A CommonJS package whose exports are the function, with itself as `default` (which its types describe).
    const decoded = jsqr.default(data, width, height)
    assert.ok(decoded, 'an independent reader finds a QR code')
    assert.equal(decoded.data, `http://countersign.test/sign/${uuid}`)
  })

  it('still serves it once the payload is resolved (the page shows the outcome)', async () => {
    const uuid = await createPayload(t, apiKey, payloadBodies.connect)
    await t.service.ctx.payloads.reject(uuid, undefined)
    assert.equal((await t.inject({ method: 'GET', url: `/sign/${uuid}/qr.svg` })).statusCode, 200)
  })

  it('is 404 for an unknown uuid or one that is not a uuid', async () => {
    for (const path of ['/sign/00000000-0000-4000-8000-000000000000/qr.svg', '/sign/not-a-uuid/qr.svg']) {
      const response = await t.inject({ method: 'GET', url: path })
      assert.equal(response.statusCode, 404, path)
      assert.deepEqual(response.json(), { error: 'Payload not found' })
    }
  })
})
