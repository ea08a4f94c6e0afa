// The README's quick start, run as written: its second terminal's commands, against a `countersign serve` started
// as its first terminal says, end with a delivery the example receiver verified. Only the ports differ (free ones).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createTestDatabase, type TestDatabase } from '../support/databases.js'
import { freePort, type Instance, instanceEnv, startInstance, stopInstance } from '../support/serve-process.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The shell blocks of the README's quick start: terminal 1's, then terminal 2's. */
function quickStartBlocks(): [string, string] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const section = readme.slice(readme.indexOf('## Quick start'))
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string)
  assert.ok(blocks.length >= 2, 'the quick start has a block per terminal')
  return [blocks[0] as string, blocks[1] as string]
}

describe('the README quick start', () => {
  let database: TestDatabase
  let instance: Instance
  let env: Record<string, string>
  before(async () => {
    const [terminalOne] = quickStartBlocks()
    assert.match(terminalOne, /^WEBHOOK_ALLOW_PRIVATE_TARGETS=true npm start$/m, 'the service is started with local webhooks allowed')
    database = await createTestDatabase('sqlite')
    env = instanceEnv(database.url)
    instance = await startInstance(env)
  })
  after(async () => {
    await stopInstance(instance)
    await database?.drop()
  })

  it('ends with a delivery the example receiver verified and printed', async () => {
    const receiverPort = await freePort()
    const script = quickStartBlocks()[1].replaceAll('http://localhost:3000', instance.url).replaceAll('8080', String(receiverPort))
    // Its own process group, so that the receiver it leaves running in the background is stopped with it.
    const shell = spawn('bash', ['-c', script], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    shell.stdout.on('data', (chunk: Buffer) => {
      output += chunk
    })
    shell.stderr.on('data', (chunk: Buffer) => {
      output += chunk
    })
    try {
      const deadline = Date.now() + 90_000
      while (!/payload\.expired: payload [0-9a-f-]{36} is expired/.test(output)) {
        assert.ok(Date.now() < deadline, `no verified delivery within 90 s:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      assert.match(output, /"secret":"whsec_/, 'the webhook was registered to a receiver on localhost')
      assert.match(output, /\{"uuid":"[0-9a-f-]{36}","status":"expired"\}/, 'the payload was created and cancelled')
    } finally {
      if (shell.pid !== undefined) {
        try {
          process.kill(-shell.pid, 'SIGTERM')
        } catch {
          // Already gone.
        }
      }
    }
  })
})
