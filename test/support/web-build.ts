// The signing page's bundles (dist/web), built once if missing: `npm test` builds them first, a single test file may not have.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { DEFAULT_WEB_ROOT } from '../../src/http/sign-page.js'

export function ensureWebBuild(): void {
  if (existsSync(path.join(DEFAULT_WEB_ROOT, 'sign.js'))) return
  // Only the web bundles: scripts/build.mjs would first delete dist/, under the feet of other test files.
  const build = spawnSync(process.execPath, ['scripts/build-web.mjs'], {
    cwd: path.resolve(DEFAULT_WEB_ROOT, '..', '..'),
    stdio: 'inherit',
  })
  if (build.status !== 0) throw new Error('could not build the signing page bundles (scripts/build-web.mjs)')
}
