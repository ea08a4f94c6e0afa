// Builds what `npm start` runs: the server's TypeScript transpiled file by file into dist/ (type checking is
// `npm run typecheck`), and the browser bundles into dist/web.
import { readdirSync, rmSync } from 'node:fs'
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

rmSync('dist', { recursive: true, force: true })
await build({
  entryPoints: sourceFiles('src'),
  outdir: 'dist',
  outbase: 'src',
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  logLevel: 'warning',
})
await buildWeb({ outdir: 'dist/web' })
