// Load helpers for the benchmarks: start a server process, drive it with autocannon, summarise.
import { type ChildProcess, spawn } from 'node:child_process'
import autocannon from 'autocannon'

export interface LoadResult {
  name: string
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  non2xx: number
  errors: number
}

export async function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  pattern: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk
      const found = pattern.exec(output)
      if (found) resolve(found)
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${output}`)))
  })
  // Keep draining the pipe (logs) so the server never blocks on a full stdout.
  child.stdout!.resume()
  return { child, match }
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

export async function load(
  name: string,
  options: {
    url: string
    method?: 'GET' | 'POST'
    headers?: Record<string, string>
    body?: string
    seconds?: number
    connections?: number
  },
): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    duration: options.seconds ?? 10,
    connections: options.connections ?? 10,
  })
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  }
}

export function table(rows: LoadResult[], baseline?: Record<string, LoadResult>): string {
  const lines = ['| endpoint | req/s | p50 ms | p99 ms | non-2xx | share of bare route |', '|---|---:|---:|---:|---:|---:|']
  for (const row of rows) {
    const base = baseline?.[row.name]
    const share = base ? `${Math.round((100 * row.requestsPerSecond) / base.requestsPerSecond)}%` : ''
    lines.push(`| ${row.name} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx + row.errors} | ${share} |`)
  }
  return lines.join('\n')
}
