// `countersign serve` as an operator starts it (bin/countersign.js): the service runs with V8's young generation and
// malloc's arenas sized for it, in the process that was started (no wrapper process left beside it); an operator's
// own choice wins.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort, instanceEnv } from '../support/serve-process.js'

const COMMAND = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url))
const canReplaceProcess = typeof (process as { execve?: unknown }).execve === 'function'

/** Starts `countersign serve`, waits for /healthz, and reads the started process's command line and environment. */
async function serveAndRead(extraEnv: Record<string, string>): Promise<{ commandLine: string[]; environment: string[] }> {
  const port = await freePort()
  const child = spawn(process.execPath, [COMMAND, 'serve'], {
    env: { ...instanceEnv('sqlite::memory:'), PORT: String(port), ...extraEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString()
  })
  try {
    for (let tries = 0; ; tries++) {
      assert.equal(child.exitCode, null, `serve exited: ${errors}`)
      const ready = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      )
      if (ready) break
      assert.ok(tries < 300, `serve did not answer /healthz: ${errors}`)
      await sleep(100)
    }
    const read = (file: string) => readFileSync(`/proc/${child.pid}/${file}`, 'utf8').split('\0').filter(Boolean)
    return { commandLine: read('cmdline'), environment: read('environ') }
  } finally {
    const exited = once(child, 'close')
    child.kill('SIGTERM')
    await exited
  }
}

describe('countersign serve (bin/countersign.js)', { skip: process.platform !== 'linux' || !canReplaceProcess }, () => {
  it('becomes the service process itself, started with 4 MB semi-spaces and two malloc arenas', async () => {
    const { commandLine, environment } = await serveAndRead({})
    // The pid that was started is the one serving: its command line is Node.js running dist/cli.js serve.
    assert.ok(
      commandLine.some((arg) => arg.endsWith('dist/cli.js')),
      commandLine.join(' '),
    )
    assert.ok(commandLine.includes('--max-semi-space-size=4'), commandLine.join(' '))
    assert.ok(environment.includes('MALLOC_ARENA_MAX=2'))
  })

  it("leaves the young generation and the arenas to the operator's NODE_OPTIONS and MALLOC_ARENA_MAX", async () => {
    const { commandLine, environment } = await serveAndRead({ NODE_OPTIONS: '--max-semi-space-size=16', MALLOC_ARENA_MAX: '8' })
    assert.ok(!commandLine.includes('--max-semi-space-size=4'), commandLine.join(' '))
    assert.ok(environment.includes('MALLOC_ARENA_MAX=8') && !environment.includes('MALLOC_ARENA_MAX=2'))
  })
})
