// Builds what `npm start` runs: the server's TypeScript transpiled file by file into dist/ (type checking is
// `npm run typecheck`), and the browser bundles into dist/web.
//
// The build is written beside dist/ and then put in its place, so that a build never leaves dist/ half written
// under a process that runs it: `npm start` while `npm test` runs the command line from dist/, or two builds at once.
import { readdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'
import { buildWeb } from './build-web.mjs'

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

const staging = `dist.building-${process.pid}`
const previous = `dist.previous-${process.pid}`
rmSync(staging, { recursive: true, force: true })
await build({
  entryPoints: sourceFiles('src'),
  outdir: staging,
  outbase: 'src',
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  logLevel: 'warning',
})
await buildWeb({ outdir: join(staging, 'web'), shownAs: 'dist/web' })
// Two renames: the old tree leaves and the new one arrives, then the old one is deleted.
try {
  renameSync('dist', previous)
} catch (error) {
  if (error.code !== 'ENOENT') throw error
}
renameSync(staging, 'dist')
rmSync(previous, { recursive: true, force: true })
