// `npm run bench`: drives the running service over loopback and prints, in one run, requests per second and
// p50/p99 latency for creating and reading payloads beside a bare Fastify route on the same machine.
// Plan limits are raised through configuration (LIMITS_PRO), not switched off, so the limiter's cost is in
// the figures. Add `-- --quick` for 3-second runs.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type LoadResult, load, startProcess, stopProcess, table } from './http.js'

const quick = process.argv.includes('--quick')
const seconds = quick ? 3 : 10
const connections = 10

const RAISED_LIMITS = JSON.stringify({ requestsPerMinute: 100_000_000, minPollIntervalMs: 0, monthlyPayloads: 100_000_000 })
const SIGN_BODY = JSON.stringify({
  type: 'sign',
  transaction: { TransactionType: 'Payment', Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', Amount: '1000000' },
})

async function benchPayloadApi(): Promise<string> {
  const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], {}, /listening on (\d+)/)
  const bareUrl = `http://127.0.0.1:${bare.match[1]}/bare`
  const baseline: Record<string, LoadResult> = {}
  try {
    await load('warm-up', { url: bareUrl, seconds: 1, connections })
    baseline['POST /api/v1/payloads'] = await load('POST /bare', {
      url: bareUrl,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: SIGN_BODY,
      seconds,
      connections,
    })
    baseline['GET /api/v1/payloads/{uuid}'] = await load('GET /bare', { url: bareUrl, seconds, connections })
  } finally {
    await stopProcess(bare.child)
  }

  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'))
  const env = { DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, PORT: '0', LIMITS_PRO: RAISED_LIMITS, LOG_LEVEL: 'info' }
  const { execFileSync } = await import('node:child_process')
  const created = JSON.parse(
    execFileSync(process.execPath, ['dist/cli.js', 'project', 'create', '--name', 'bench', '--plan', 'pro', '--json'], {
      env: { ...process.env, ...env },
    }).toString(),
  )
  const service = await startProcess(['dist/cli.js', 'serve'], env, /listening on http:\/\/127\.0\.0\.1:(\d+)/)
  const base = `http://127.0.0.1:${service.match[1]}/api/v1`
  const headers = { authorization: `Bearer ${created.apiKey}`, 'content-type': 'application/json' }
  const rows: LoadResult[] = []
  try {
    await load('warm-up', { url: `${base}/payloads`, method: 'POST', headers, body: SIGN_BODY, seconds: 1, connections })
    rows.push(
      await load('POST /api/v1/payloads', { url: `${base}/payloads`, method: 'POST', headers, body: SIGN_BODY, seconds, connections }),
    )
    const uuid = (await (await fetch(`${base}/payloads`, { method: 'POST', headers, body: SIGN_BODY })).json()).uuid
    rows.push(
      await load('GET /api/v1/payloads/{uuid}', {
        url: `${base}/payloads/${uuid}`,
        headers: { authorization: headers.authorization },
        seconds,
        connections,
      }),
    )
  } finally {
    await stopProcess(service.child)
    rmSync(dir, { recursive: true, force: true })
  }
  return [
    `### Payload API on SQLite (${seconds} s per run, ${connections} connections, loopback)`,
    '',
    table([...rows, ...Object.values(baseline)], baseline),
  ].join('\n')
}

const sections = [await benchPayloadApi()]
for (const [file, name] of [
  ['./webhooks.js', 'benchWebhooks'],
  ['./analytics.js', 'benchAnalytics'],
] as const) {
  const module = await import(file).catch(() => undefined)
  if (module?.[name]) sections.push(await module[name]())
}
process.stdout.write(`\n${sections.join('\n\n')}\n`)
