// `npm test`: builds what the tests load (dist/ for the command line and the pages), then runs every test file once
// with node's test runner (TypeScript through tsx), against SQLite and PostgreSQL, and ends with what passed, what
// failed and what was skipped and why.
//
//   npm test                        the whole suite
//   npm test -- <file> [<file>...]  some files
//   npm run test:quick              unit and in-process API tests on SQLite: the edit-test loop
//
// The in-process test files share a few processes (see grouped()); the files that start processes or a browser each
// have their own, as do files named on the command line. TEST_TIMEOUT_MS bounds each test (default 5 minutes).
// TEST_CONCURRENCY sets how many processes run at once
// (default 2, the cores of the CI machine). TEST_TIMINGS=1 adds the slowest processes to the last lines.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { run } from 'node:test'
import { spec } from 'node:test/reporters'
import { pathToFileURL } from 'node:url'

/**
 * Files that start processes, a browser or several instances: what `--quick` leaves out. Tests of the command line
 * are in `cli.test.ts` files (test/cli.test.ts, auth.local.cli.test.ts), the browser ones in `*.browser.test.ts`; the
 * SDK's package test packs and installs the SDK with npm.
 */
const SLOW_TESTS = /(^|\/)e2e\/|(^|[/.])cli\.test\.ts$|\.browser\.test\.ts$|^packages\/sdk\/test\/package\.test\.ts$/

/**
 * In-process files that keep a process of their own all the same: their tests time the code under test against short
 * real timeouts (500 ms requests to the rippled double), which the garbage left by the files before them in a shared
 * process made them miss on a loaded machine (2 runs in 5).
 */
const OWN_PROCESS = ['test/platform/xrpl/xrpl-node.test.ts']

/**
 * The files that take longest (processes, browsers, several instances), started first and longest first, so that the
 * run does not end waiting on one of them alone while the quick files have long finished. Other files follow in
 * name order, after the shared processes of the in-process files.
 */
const LONGEST_FIRST = [
  'test/cli.test.ts',
  'test/e2e/signing-page.browser.test.ts',
  'test/e2e/reliability.test.ts',
  'test/features/accounts/auth.local.cli.test.ts',
  'test/e2e/multi-instance.test.ts',
  'test/e2e/dashboard.browser.test.ts',
  'test/e2e/webhooks-two-dispatchers.test.ts',
  'test/e2e/webhooks-crash.test.ts',
]

function startOrder(file) {
  const rank = LONGEST_FIRST.indexOf(file)
  return rank === -1 ? LONGEST_FIRST.length : rank
}

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path)
      return entry.name.endsWith('.test.ts') ? [path] : []
    })
    .sort()
}

/**
 * Test files grouped into `count` files that import them, each run as one process: each process then loads the
 * service, its dependencies and TypeScript once rather than once per file, which is most of what a quick file costs.
 * The files go round-robin in name order, which spreads each folder's heavy files over the groups; more groups than
 * files run at once lets the runner even out what is left at the end.
 */
function grouped(files, count, dir) {
  const groups = Array.from({ length: Math.min(count, files.length) }, (_, group) =>
    files.filter((_file, index) => index % Math.min(count, files.length) === group),
  )
  return groups.map((group, index) => {
    const path = join(dir, `group-${index + 1}-of-${groups.length}.test.mjs`)
    writeFileSync(path, group.map((file) => `import ${JSON.stringify(pathToFileURL(resolve(file)).href)}\n`).join(''))
    return path
  })
}

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const given = args.filter((arg) => arg !== '--quick')

process.stdout.write(`Running the tests on Node.js ${process.versions.node}\n`)
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] })
if (build.status !== 0) process.exit(build.status ?? 1)

let files = given.length > 0 ? given : [...testFiles('test'), ...testFiles('packages').filter((file) => file.includes('/test/'))]
if (quick) {
  files = files.filter((file) => !SLOW_TESTS.test(file))
  process.env.TEST_DATABASES = 'sqlite'
}
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 2)
// The quick files (in-process tests) share processes, unless named one by one on the command line; the slow ones
// (processes, browsers) each have their own, started first, longest first; the groups come next, then the other
// slow files.
let groupDir
if (given.length === 0 || quick) {
  const ownProcess = (file) => SLOW_TESTS.test(file) || OWN_PROCESS.includes(file)
  const [shared, own] = [files.filter((file) => !ownProcess(file)), files.filter(ownProcess)]
  groupDir = mkdtempSync(join(tmpdir(), 'countersign-tests-'))
  const groups = grouped(shared.sort(), concurrency * 2, groupDir)
  own.sort((a, b) => startOrder(a) - startOrder(b))
  const listed = own.filter((file) => LONGEST_FIRST.includes(file))
  files = [...listed, ...groups, ...own.filter((file) => !LONGEST_FIRST.includes(file))]
} else {
  files.sort((a, b) => startOrder(a) - startOrder(b))
}
process.env.NODE_ENV = 'test'
// Each test file is a process of its own, as is each command a test starts, and each loads the service and its
// dependencies again: V8's compiled code, kept between processes and runs, spares them much of that.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'countersign-test-compile-cache')

const skipReasons = new Map()
let summary
// tsx/esm: TypeScript through the ES module loader alone; the CommonJS one, which nothing here needs, would add its
// own hooks to every package loaded with require().
// A test that hangs (a browser that never answers) fails after this long instead of holding the whole run.
const timeout = Number(process.env.TEST_TIMEOUT_MS ?? 5 * 60_000)
const stream = run({ files, concurrency, timeout, execArgv: ['--import', 'tsx/esm'] })
stream.on('test:pass', (data) => {
  if (data.skip === undefined || data.skip === false) return
  const reason = typeof data.skip === 'string' ? data.skip : 'skipped without a reason'
  skipReasons.set(reason, (skipReasons.get(reason) ?? 0) + 1)
})
// Each failing test's name and file, repeated in the last lines, where a CI log's tail shows them.
const failures = []
stream.on('test:fail', (data) => {
  // A suite fails with its failing tests: the tests are what to name.
  if (data.details?.type === 'suite') return
  // A grouped file's tests are reported under the group's file, a temporary one, which names nothing.
  const path = data.file === undefined ? undefined : relative(process.cwd(), data.file)
  const file = path === undefined || path.startsWith('..') ? '' : `${path}: `
  failures.push(`failed: ${file}${data.name}`)
})
const fileTimes = []
stream.on('test:summary', (data) => {
  // One summary per file, then the run's own, which has no file.
  if (data.file === undefined) summary = data.counts
  else fileTimes.push([data.duration_ms, data.file])
})
for await (const chunk of stream.compose(spec)) process.stdout.write(chunk)
if (groupDir !== undefined) rmSync(groupDir, { recursive: true, force: true })

const counts = summary ?? { passed: 0, failed: 1, cancelled: 0 }
const failed = counts.failed + counts.cancelled
// A skipped suite counts once here, however many tests it holds: its tests were never declared.
const skipped = [...skipReasons.values()].reduce((sum, count) => sum + count, 0)
const lines = ['']
if (process.env.TEST_TIMINGS === '1') {
  // The slowest files, for whoever makes the suite faster.
  for (const [ms, file] of fileTimes.sort((a, b) => b[0] - a[0]).slice(0, 25)) {
    lines.push(`${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(`${process.cwd()}/`, '')}`)
  }
  lines.push('')
}
lines.push(...failures.slice(0, 20))
if (failures.length > 20) lines.push(`failed: and ${failures.length - 20} more`)
for (const [reason, count] of skipReasons) lines.push(`skipped ${count} (suites or tests): ${reason}`)
lines.push(`${counts.passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`)
process.stdout.write(`${lines.join('\n')}\n`)
process.exitCode = failed > 0 || (summary === undefined && files.length > 0) ? 1 : 0
