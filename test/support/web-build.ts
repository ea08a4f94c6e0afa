// The browser bundles (dist/web: the signing page and the dashboard), built once if missing: `npm test` builds them
// first, a single test file may not have.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { DEFAULT_WEB_ROOT } from '../../src/features/signing/page.js'

export function ensureWebBuild(): void {
  if (['sign.js', 'dashboard.js'].every((entry) => existsSync(path.join(DEFAULT_WEB_ROOT, entry)))) return
  // Only the web bundles: scripts/build.mjs would first delete dist/, under the feet of other test files.
  const build = spawnSync(process.execPath, ['scripts/build-web.mjs'], {
    cwd: path.resolve(DEFAULT_WEB_ROOT, '..', '..'),
    stdio: 'inherit',
  })
  if (build.status !== 0) throw new Error('could not build the browser bundles (scripts/build-web.mjs)')
}
