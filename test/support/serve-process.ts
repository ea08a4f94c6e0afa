// `countersign serve` as its own process, for multi-process tests: start it on a free port, wait for /healthz,
// stop it, and create projects through the real CLI.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const CLI = ['--import', 'tsx', 'src/cli.ts']

export interface Instance {
  url: string
  process: ChildProcess
  /** Everything the process printed, stdout and stderr. */
  output: string[]
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts `countersign serve` with `env` on a free port; resolves once /healthz answers (within 30 s). */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  const port = await freePort()
  const child = spawn(process.execPath, [...CLI, 'serve'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
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
