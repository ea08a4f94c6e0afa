// `countersign serve` as an operator starts it (bin/countersign.js): the service runs with V8's young generation and
// malloc's arenas sized for it, in the process that was started (no wrapper process left beside it); an operator's
// own choice wins.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { instanceEnv, startInstance, stopInstance } from '../support/serve-process.js'

const COMMAND = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url))
const canReplaceProcess = typeof (process as { execve?: unknown }).execve === 'function'

/** Starts `countersign serve` and reads the started process's command line and environment while it serves. */
async function serveAndRead(extraEnv: Record<string, string>): Promise<{ commandLine: string[]; environment: string[] }> {
  const instance = await startInstance({ ...instanceEnv('sqlite::memory:'), ...extraEnv }, [COMMAND])
  try {
    const read = (file: string) => readFileSync(`/proc/${instance.process.pid}/${file}`, 'utf8').split('\0').filter(Boolean)
    return { commandLine: read('cmdline'), environment: read('environ') }
  } finally {
    await stopInstance(instance)
  }
}

describe('countersign serve (bin/countersign.js)', { skip: process.platform !== 'linux' || !canReplaceProcess }, () => {
  it('becomes the service process itself, started with 4 MB semi-spaces, a 20% old-generation growth, no pretenuring and two malloc arenas', async () => {
    const { commandLine, environment } = await serveAndRead({})
    // The pid that was started is the one serving (not a wrapper beside it): Node.js running dist/cli.js serve.
    assert.deepEqual(commandLine.slice(1), [
      '--max-semi-space-size=4',
      '--heap-growing-percent=20',
      '--no-allocation-site-pretenuring',
      fileURLToPath(new URL('../../dist/cli.js', import.meta.url)),
      'serve',
    ])
    assert.ok(environment.includes('MALLOC_ARENA_MAX=2'), 'MALLOC_ARENA_MAX=2 in the environment')
  })

  it("leaves the young generation and the arenas to the operator's NODE_OPTIONS and MALLOC_ARENA_MAX", async () => {
    const { commandLine, environment } = await serveAndRead({ NODE_OPTIONS: '--max_semi_space_size=16', MALLOC_ARENA_MAX: '8' })
    // Nothing to add: the started process serves the command itself, with the operator's NODE_OPTIONS and arenas.
    assert.deepEqual(commandLine.slice(1), [COMMAND, 'serve'])
    assert.ok(environment.includes('NODE_OPTIONS=--max_semi_space_size=16'))
    assert.ok(environment.includes('MALLOC_ARENA_MAX=8') && !environment.includes('MALLOC_ARENA_MAX=2'))
  })
})
