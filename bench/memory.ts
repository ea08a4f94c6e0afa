// Memory after a million payloads: one service process on embedded SQLite (LOG_LEVEL=info, every worker running) is
// sent 1,000,000 creations and then 1,000,000 reads, each payload read once (each poll gate key used once),
// and its resident set size is read from /proc. The service is started as operators start it, `countersign serve`
// (bin/countersign.js, with its Node options), in the process the benchmark spawned. Slow (minutes):
// `npm run bench -- --memory` or `--only=memory`; BENCH_MEMORY_PAYLOADS sets another count.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { type Goal, load, startProcess, stopProcess, table } from './http.js'

const PAYLOADS = Number(process.env.BENCH_MEMORY_PAYLOADS ?? 1_000_000)
const RSS_GOAL_MB = 200
const SIGN_BODY = JSON.stringify({
  type: 'sign',
  transaction: { TransactionType: 'Payment', Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', Amount: '1000000' },
})

function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN)
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) }
}

export async function benchMemory(): Promise<{ text: string; goal: Goal }> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-memory-'))
  const path = join(dir, 'bench.db')
  const env = {
    DATABASE_URL: `sqlite:${path}`,
    PORT: '0',
    LOG_LEVEL: 'info',
    LIMITS_PRO: '{"monthlyPayloads": 100000000, "requestsPerMinute": 100000000}',
  }
  try {
    const project = JSON.parse(
      execFileSync(process.execPath, ['dist/cli.js', 'project', 'create', '--name', 'bench', '--plan', 'pro', '--json'], {
        env: { ...process.env, ...env },
      }).toString(),
    ) as { apiKey: string }
    const server = await startProcess(['bin/countersign.js', 'serve'], env, /listening on http:\/\/127\.0\.0\.1:(\d+)/)
    try {
      const pid = server.child.pid!
      const base = `http://127.0.0.1:${server.match[1]}/api/v1/payloads`
      const authorization = `Bearer ${project.apiKey}`
      const atStart = memoryOf(pid)
      const created = await load('POST /api/v1/payloads', {
        url: base,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: SIGN_BODY,
        amount: PAYLOADS,
      })
      const afterCreating = memoryOf(pid)
      const reader = new SQLite(path, { readonly: true })
      const paths = (reader.prepare('select uuid from payloads').pluck().all() as string[]).map((uuid) => `/api/v1/payloads/${uuid}`)
      reader.close()
      let next = 0
      const read = await load('GET /api/v1/payloads/{uuid}', {
        url: base,
        headers: { authorization },
        amount: paths.length,
        nextPath: () => paths[next++ % paths.length]!,
      })
      const afterReading = memoryOf(pid)
      const text = [
        `### Memory after ${PAYLOADS.toLocaleString('en-US')} payloads created and read (SQLite, one process)`,
        '',
        table([created, read]),
        '',
        '| when | RSS | peak RSS |',
        '| --- | ---: | ---: |',
        `| started | ${atStart.rssMb} MB | ${atStart.peakMb} MB |`,
        `| after ${paths.length.toLocaleString('en-US')} creations | ${afterCreating.rssMb} MB | ${afterCreating.peakMb} MB |`,
        `| after as many reads, each payload once | ${afterReading.rssMb} MB | ${afterReading.peakMb} MB |`,
      ].join('\n')
      return {
        text,
        goal: {
          goal: `RSS under ${RSS_GOAL_MB} MB after ${PAYLOADS.toLocaleString('en-US')} payloads created and read`,
          measured: `${afterReading.rssMb} MB (peak ${afterReading.peakMb} MB)`,
          met: afterReading.rssMb < RSS_GOAL_MB,
        },
      }
    } finally {
      await stopProcess(server.child)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
