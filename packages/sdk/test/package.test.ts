// The SDK as an integrator gets it: `npm pack -w packages/sdk`, the tarball installed offline into an empty directory
// outside this repository, then a script and the README's example run there against a real running service.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Wallet } from 'xrpl'
import { ManualClock } from '../../../src/platform/clock.js'
import { freePort } from '../../../test/support/serve-process.js'
import { startTestService, type TestService } from '../../../test/support/service.js'
import { signText } from '../../../test/support/wallet-signing.js'

const run = promisify(execFile)
const REPOSITORY = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
/** npm and node as the tests run them: the runtime running this file first on the PATH. */
const ENV = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` }

/** The README's example: its first TypeScript block, as written. */
function readmeExample(): string {
  const readme = readFileSync(join(REPOSITORY, 'packages/sdk/README.md'), 'utf8')
  const match = /```ts\n([\s\S]*?)```/.exec(readme)
  assert.ok(match?.[1], 'the README has a TypeScript example')
  return match[1]
}

describe('@countersign/sdk packed, installed in an empty directory, and used', () => {
  let t: TestService
  let directory: string

  before(async () => {
    // Workers on: the README's example receives a real webhook delivery. The clock starts at the real time, which the
    // SDK's verification checks the delivery's timestamp against.
    t = await startTestService('sqlite', { listen: true, workers: true, clock: new ManualClock(Date.now()) })
    directory = mkdtempSync(join(tmpdir(), 'countersign-sdk-consumer-'))
    const { stdout } = await run('npm', ['pack', '-w', 'packages/sdk', '--pack-destination', directory, '--json'], {
      cwd: REPOSITORY,
      env: ENV,
    })
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }]
    writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    // Offline, with a cache of its own: the tarball must bring everything it needs.
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', join(directory, '.npm-cache'), `./${filename}`], {
      cwd: directory,
      env: ENV,
    })
  })
  after(async () => {
    await t.stop()
    rmSync(directory, { recursive: true, force: true })
  })

  it('installs only dist/, the README and package.json, with no dependencies', () => {
    const installed = JSON.parse(readFileSync(join(directory, 'node_modules/@countersign/sdk/package.json'), 'utf8'))
    assert.equal(installed.name, '@countersign/sdk')
    assert.equal(installed.dependencies, undefined)
    const lock = JSON.parse(readFileSync(join(directory, 'package-lock.json'), 'utf8'))
    assert.deepEqual(Object.keys(lock.packages).sort(), ['', 'node_modules/@countersign/sdk'])
  })

  it('runs a script against the running service: payloads, webhooks, typed errors, signatures', async () => {
    const { apiKey } = await t.createProject('pro', 'Packaged shop')
    writeFileSync(
      join(directory, 'smoke.mjs'),
      `import { Countersign, NotFoundError, verifyWebhookSignature } from '@countersign/sdk'
const client = new Countersign({ apiKey: process.env.API_KEY, baseUrl: process.env.BASE_URL })
const created = await client.payloads.create({ type: 'signMessage', message: 'hello' })
const read = await client.payloads.get(created.uuid)
const cancelled = await client.payloads.cancel(created.uuid)
const webhook = await client.webhooks.create({ url: 'https://127.0.0.1:8443/packaged' })
const rotated = await client.webhooks.rotateSecret(webhook.id)
const missing = await client.payloads.get('00000000-0000-4000-8000-000000000000').catch((error) => error)
console.log(JSON.stringify({
  status: read.status,
  cancelled: cancelled.status,
  rotated: rotated.id === webhook.id && rotated.secret !== webhook.secret,
  notFound: missing instanceof NotFoundError && missing.status,
  verifies: verifyWebhookSignature('{}', 'sha256=' + '0'.repeat(64), rotated.secret),
}))
`,
    )
    const { stdout } = await run(process.execPath, ['smoke.mjs'], { cwd: directory, env: { ...ENV, API_KEY: apiKey, BASE_URL: t.url } })
    assert.deepEqual(JSON.parse(stdout), { status: 'pending', cancelled: 'expired', rotated: true, notFound: 404, verifies: false })
  })

  it("type-checks the README's example against the installed type declarations", async () => {
    writeFileSync(join(directory, 'example.mts'), readmeExample())
    writeFileSync(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(REPOSITORY, 'node_modules/@types')],
        },
        files: ['example.mts'],
      }),
    )
    await run(process.execPath, [join(REPOSITORY, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: directory, env: ENV })
  })

  it("runs the README's example as written: the payload signed by a real wallet, its outcome by stream and by webhook", async () => {
    const { apiKey } = await t.createProject('pro', 'Example Shop')
    writeFileSync(join(directory, 'example.mts'), readmeExample())
    const child = spawn(process.execPath, ['example.mts'], {
      cwd: directory,
      env: { ...ENV, COUNTERSIGN_API_KEY: apiKey, COUNTERSIGN_URL: t.url, RECEIVER_PORT: String(await freePort()) },
    })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<number | null>((done) => child.on('exit', done))
    const timer = setTimeout(() => child.kill(), 60_000)
    try {
      const signingUrl = await new Promise<string>((found, failed) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString()
          const match = /^Open (\S+)$/m.exec(stdout)
          if (match?.[1]) found(match[1])
        })
        child.on('exit', () => failed(new Error(`the example ended before printing the signing URL: ${stdout}${stderr}`)))
      })
      const uuid = signingUrl.split('/').pop() as string
      assert.equal(signingUrl, `${t.config.publicUrl}/sign/${uuid}`)

      // The user signs the message the page shows with a real key.
      const { message } = await (await fetch(`${t.url}/api/v1/sign/${uuid}`)).json()
      assert.match(message, /^Sign in to Example Shop, request [0-9a-f-]{36}$/)
      const wallet = Wallet.generate()
      const approved = await fetch(`${t.url}/api/v1/sign/${uuid}/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          walletAdapter: 'gemwallet',
          publicKey: wallet.publicKey,
          signature: signText(wallet, message),
        }),
      })
      assert.equal(approved.status, 200, await approved.text())

      assert.equal(await exited, 0, stderr)
      const lines = stdout.trim().split('\n')
      assert.deepEqual(lines.slice(1).sort(), [`Payload: signed ${wallet.classicAddress}`, `Webhook: payload.signed ${uuid}`])
      const webhooks = await fetch(`${t.url}/api/v1/webhooks`, { headers: { authorization: `Bearer ${apiKey}` } })
      assert.deepEqual((await webhooks.json()).webhooks, [], 'the example removed its webhook')
    } finally {
      clearTimeout(timer)
      child.kill()
    }
  })
})
