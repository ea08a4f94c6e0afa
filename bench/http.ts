// Load helpers for the benchmarks: start a server process, drive it with autocannon, summarise.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import autocannon from 'autocannon'

export interface LoadResult {
  name: string
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  non2xx: number
  errors: number
  /** The share of the machine's processor time (all cores) in use during the run, whoever used it; Linux only. */
  machineBusy?: number
  /** The server processes' processor time per answered request, in microseconds (serverPids given; Linux only). */
  serverCpuUs?: number
}

/** The share of processor time in use between two readings of processorTicks(), or undefined. */
export function busyBetween(before: ReturnType<typeof processorTicks>, after: ReturnType<typeof processorTicks>) {
  return before && after ? (after.busy - before.busy) / (after.total - before.total) : undefined
}

/** Processor time used by the processes so far, in ticks (utime + stime of /proc/<pid>/stat); undefined off Linux. */
export function processTicks(pids: number[]): number | undefined {
  try {
    return pids.reduce((sum, pid) => {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return sum + Number(fields[11]) + Number(fields[12])
    }, 0)
  } catch {
    return undefined
  }
}

/**
 * Processor time, in ticks, of every process whose command is `command` (`postgres`: the server and its backends), by
 * pid; undefined off Linux. `ticksSince` gives the time used between two readings, counting processes started since.
 */
export function commandTicks(command: string): Map<number, number> | undefined {
  try {
    const ticks = new Map<number, number>()
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      let stat: string
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      } catch {
        continue // exited while the list was read
      }
      const open = stat.indexOf('(')
      const close = stat.lastIndexOf(')')
      if (stat.slice(open + 1, close) !== command) continue
      const fields = stat.slice(close + 2).split(' ')
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]))
    }
    return ticks
  } catch {
    return undefined
  }
}

export function ticksSince(before: Map<number, number> | undefined, after: Map<number, number> | undefined): number | undefined {
  if (!before || !after) return undefined
  let used = 0
  for (const [pid, ticks] of after) used += ticks - (before.get(pid) ?? 0)
  return used
}

/** Clock ticks a second (USER_HZ), as /proc counts them. */
export const TICKS_PER_SECOND = 100

/** Processor time used and in all, in ticks, from /proc/stat's first line (all cores); undefined off Linux. */
export function processorTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
    const total = fields.reduce((sum, value) => sum + value, 0)
    // idle and iowait
    return { busy: total - fields[3]! - fields[4]!, total }
  } catch {
    return undefined
  }
}

/**
 * Starts a server process whose stdout (its log lines) goes to a file, as a deployed service's logs go to a
 * collector: reading them here would spend the load generator's CPU on the server's logs. Resolves once the
 * output matches `pattern`.
 */
export async function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  pattern: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const logDir = mkdtempSync(join(tmpdir(), 'countersign-bench-log-'))
  const logPath = join(logDir, 'stdout.log')
  const log = openSync(logPath, 'w')
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', log, 'inherit'] })
  closeSync(log)
  let exitCode: number | null | undefined
  child.once('exit', (code) => {
    exitCode = code
  })
  const removeLog = () => rmSync(logDir, { recursive: true, force: true })
  for (;;) {
    await delay(25)
    const output = readFileSync(logPath, 'utf8')
    const match = pattern.exec(output)
    if (match) {
      if (exitCode === undefined) child.once('exit', removeLog)
      else removeLog()
      return { child, match }
    }
    if (exitCode !== undefined) {
      removeLog()
      throw new Error(`${args.join(' ')} exited with ${exitCode}: ${output}`)
    }
  }
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
    /** A number of requests to send instead of a duration. */
    amount?: number
    connections?: number
    /** Each request's path in turn, instead of the URL's (e.g. to read many payloads round-robin). */
    nextPath?: () => string
    /** Headers each request adds in turn to `headers` (e.g. a fresh Idempotency-Key each). */
    nextHeaders?: () => Record<string, string>
    /** The server processes whose processor time per request to report. */
    serverPids?: number[]
  },
): Promise<LoadResult> {
  const { nextPath, nextHeaders } = options
  const ticksBefore = processorTicks()
  const serverBefore = options.serverPids && processTicks(options.serverPids)
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    ...((nextPath || nextHeaders) && {
      requests: [
        {
          setupRequest: (request: autocannon.Request) => ({
            ...request,
            ...(nextPath && { path: nextPath() }),
            ...(nextHeaders && { headers: { ...request.headers, ...nextHeaders() } }),
          }),
        },
      ],
    }),
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds ?? 10 }),
    connections: options.connections ?? 10,
  })
  const ticksAfter = processorTicks()
  const serverAfter = options.serverPids && processTicks(options.serverPids)
  if (result.non2xx > 0) process.stderr.write(`${name}: non-2xx answers by status ${JSON.stringify(result.statusCodeStats)}\n`)
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    machineBusy: busyBetween(ticksBefore, ticksAfter),
    serverCpuUs:
      serverBefore !== undefined && serverAfter !== undefined && result.requests.total > 0
        ? Math.round(((serverAfter - serverBefore) / TICKS_PER_SECOND / result.requests.total) * 1e6)
        : undefined,
  }
}

export function table(rows: LoadResult[], baseline?: Record<string, LoadResult>): string {
  const lines = [
    '| endpoint | req/s | p50 ms | p99 ms | non-2xx | share of bare route | server CPU µs/request | machine busy |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const row of rows) {
    const base = baseline?.[row.name]
    const share = base ? `${Math.round((100 * row.requestsPerSecond) / base.requestsPerSecond)}%` : ''
    const busy = row.machineBusy === undefined ? '' : `${Math.round(100 * row.machineBusy)}%`
    const cpu = row.serverCpuUs === undefined ? '' : String(row.serverCpuUs)
    lines.push(
      `| ${row.name} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx + row.errors} | ${share} | ${cpu} | ${busy} |`,
    )
  }
  return lines.join('\n')
}

export interface Goal {
  goal: string
  measured: string
  met: boolean
}

export function goalsTable(goals: Goal[]): string {
  return [
    '| goal | measured | met |',
    '|---|---|---|',
    ...goals.map((g) => `| ${g.goal} | ${g.measured} | ${g.met ? 'yes' : 'no'} |`),
  ].join('\n')
}
