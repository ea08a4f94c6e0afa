import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { buildWeb } from '../../scripts/build-web.mjs'

/** What a phone should fetch before the page works; the wallet SDKs come later, on use. */
const FIRST_LOAD_BUDGET_GZIP_BYTES = 20 * 1024
const WALLET_LIBRARIES = ['@gemwallet/api', '@crossmarkio/sdk', '@ledgerhq/', 'ripple-binary-codec', 'ripple-keypairs', 'qrcode', 'buffer/']
/**
 * The project's own modules the page needs later or never: instants are written out only in a connect request's
 * challenge, and the payload views are the server's. A page module importing a model that imports them loads them too.
 */
const LATER_SOURCES = ['src/platform/utc.ts', 'src/features/payloads/view.ts']

describe('buildWeb', () => {
  let outdir: string
  let built: Awaited<ReturnType<typeof buildWeb>>
  const root = path.resolve(import.meta.dirname, '../..')

  before(async () => {
    outdir = await mkdtemp(path.join(tmpdir(), 'countersign-web-'))
    built = await buildWeb({ outdir })
  })
  after(() => rm(outdir, { recursive: true, force: true }))

  it('writes the page script and stylesheet', async () => {
    assert.match(await readFile(path.join(outdir, 'sign.js'), 'utf8'), /\/api\/v1\/sign\//)
    assert.match(await readFile(path.join(outdir, 'sign.css'), 'utf8'), /\.outcome/)
    assert.ok(built.firstLoad.includes('sign.js') && built.firstLoad.includes('sign.css'))
  })

  it('writes no regular expression with a lookbehind, which Safari before 16.4 cannot parse (the whole script would not start)', async () => {
    const scripts = Object.keys(built.metafile.outputs).filter((file) => file.endsWith('.js'))
    assert.ok(scripts.length > 3)
    for (const file of scripts) {
      const text = await readFile(path.resolve(root, file), 'utf8')
      assert.equal(/\(\?<[=!]/.test(text), false, `${file} holds a lookbehind`)
    }
  })

  it('keeps the first load small and free of wallet libraries and of what the page needs later', () => {
    assert.ok(built.firstLoadGzipBytes < FIRST_LOAD_BUDGET_GZIP_BYTES, `first load is ${built.firstLoadGzipBytes} bytes gzipped`)
    const firstLoad = new Set(built.firstLoad)
    let checked = 0
    for (const [file, output] of Object.entries(built.metafile.outputs)) {
      if (!firstLoad.has(path.relative(outdir, path.resolve(root, file)))) continue
      checked += 1
      for (const input of Object.keys(output.inputs)) {
        assert.ok(!WALLET_LIBRARIES.some((library) => input.includes(`node_modules/${library}`)), `${input} is loaded before it is needed`)
        assert.ok(!LATER_SOURCES.includes(input), `${input} is loaded before it is needed`)
      }
    }
    // Every first-load file was found among the outputs, so none went unchecked.
    assert.equal(checked, built.firstLoad.length)
  })
})
