// The `countersign` command as its own process: `serve` for multi-process tests (start it on a free port, wait
// for /healthz, stop it), and projects created through the real CLI.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
/**
 * Node's arguments that run the CLI as `countersign` does: built, from dist/, which `npm test` builds before any test
 * runs. Run from its source through tsx instead, each command would spend a second or more transpiling it.
 */
export const CLI = [fileURLToPath(new URL('../../dist/cli.js', import.meta.url))]

export interface Instance {
  url: string
  process: ChildProcess
  /** Everything the process printed, stdout and stderr. */
  output: string[]
}

/**
 * What a test instance on `databaseUrl` runs with: on 127.0.0.1, webhooks to 127.0.0.1 allowed, warnings only, and a
 * heartbeat every second on live streams.
 */
export function instanceEnv(databaseUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://countersign.test',
    SESSION_SECRET: 'serve-process-test-secret-0123456789abcdef',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    LIVE_HEARTBEAT_MS: '1000',
  }
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Starts `countersign serve` with `env` on a free port; resolves once /healthz answers (within 30 s). `cli` is the
 * script Node.js runs: dist/cli.js, or bin/countersign.js to start it as an operator does.
 */
export async function startInstance(env: Record<string, string>, cli: string[] = CLI): Promise<Instance> {
  const port = await freePort()
  const child = spawn(process.execPath, [...cli, 'serve'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()))
  const url = `http://127.0.0.1:${port}`
  const deadline = performance.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance on port ${port} exited: ${output.join('')}`)
    const ready = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ready) return { url, process: child, output }
    if (performance.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`instance on port ${port} did not start: ${output.join('')}`)
    }
    await sleep(100)
  }
}

/** Stops an instance with SIGTERM and waits until it has exited and its output has been read. */
export async function stopInstance(instance: Instance | undefined): Promise<void> {
  if (!instance || instance.process.exitCode !== null || instance.process.signalCode !== null) return
  const exited = once(instance.process, 'close')
  instance.process.kill('SIGTERM')
  await exited
}

/** Creates a project with `countersign project create --json` and returns its API key. */
export async function createProjectWithCli(env: Record<string, string>, plan: 'free' | 'pro'): Promise<string> {
  const { stdout } = await run(process.execPath, [...CLI, 'project', 'create', '--name', `Shop ${plan}`, '--plan', plan, '--json'], { env })
  return (JSON.parse(stdout) as { apiKey: string }).apiKey
}
