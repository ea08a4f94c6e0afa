// `npm test`: builds the browser bundles the pages need, then runs every test file with node's test runner
// (TypeScript through tsx), once, against SQLite and PostgreSQL. Extra arguments are passed through
// (e.g. `npm test -- test/http/payloads.happy.test.ts`).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return testFiles(path)
      return entry.name.endsWith('.test.ts') ? [path] : []
    })
    .sort()
}

const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' })
if (build.status !== 0) process.exit(build.status ?? 1)

const given = process.argv.slice(2)
const files = given.length > 0 ? given : [...testFiles('test'), ...testFiles('packages').filter((f) => f.includes('/test/'))]
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
)
process.exit(result.status ?? 1)
