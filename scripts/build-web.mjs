// Bundles the browser pages into dist/web with esbuild: the signing page's script (split so that wallet SDKs load
// only when used) and its stylesheet, and the dashboard's script and stylesheet. Importable (scripts/build.mjs calls
// buildWeb) and runnable alone.
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const ENTRY_POINTS = [
  { in: 'src/web/sign/main.ts', out: 'sign' },
  { in: 'src/web/sign/sign.css', out: 'sign' },
]

// Built apart from the signing page so that the two never share a chunk: each page loads only its own code.
const DASHBOARD_ENTRY_POINTS = [
  { in: 'src/web/dashboard/main.ts', out: 'dashboard' },
  { in: 'src/web/dashboard/dashboard.css', out: 'dashboard' },
]

/**
 * @param {{ outdir?: string, minify?: boolean, shownAs?: string }} [options] outdir is relative to the repository root unless
 *   absolute; shownAs names it in the printed sizes (where it will be, when it is built elsewhere first).
 * @returns {Promise<{ metafile: import('esbuild').Metafile, outputs: Array<{ file: string, bytes: number, gzipBytes: number }>, firstLoad: string[], firstLoadGzipBytes: number, dashboardGzipBytes: number }>}
 */
export async function buildWeb({ outdir = 'dist/web', minify = true, shownAs = outdir } = {}) {
  const absoluteOutdir = path.resolve(root, outdir)
  // The pages' icon, as it is (both pages link it; a cached icon is revalidated like the entry files).
  await mkdir(absoluteOutdir, { recursive: true })
  await copyFile(path.resolve(root, 'src/web/shared/favicon.svg'), path.join(absoluteOutdir, 'favicon.svg'))
  const dashboard = await build({
    absWorkingDir: root,
    entryPoints: DASHBOARD_ENTRY_POINTS,
    outdir: absoluteOutdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify,
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
  })
  const result = await build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir: absoluteOutdir,
    bundle: true,
    // ES modules with splitting: each dynamic import() (the wallet SDKs, the QR library) becomes a chunk loaded on use.
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify,
    metafile: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [ledgerBufferImport],
    legalComments: 'linked',
    logLevel: 'warning',
  })
  const outputs = await Promise.all(
    [...Object.keys(result.metafile.outputs), ...Object.keys(dashboard.metafile.outputs)]
      .filter((file) => !file.endsWith('.map') && !file.endsWith('.LEGAL.txt'))
      .map(async (file) => {
        const content = await readFile(path.resolve(root, file))
        const gzipped = gzipSync(content, { level: 9 })
        // Served as they are by @fastify/static's preCompressed option: phones get brotli or gzip, never the raw file.
        await writeFile(`${path.resolve(root, file)}.br`, brotliCompressSync(content))
        await writeFile(`${path.resolve(root, file)}.gz`, gzipped)
        return { file: path.relative(absoluteOutdir, path.resolve(root, file)), bytes: content.length, gzipBytes: gzipped.length }
      }),
  )
  const firstLoad = firstLoadFiles(result.metafile, root, absoluteOutdir)
  const firstLoadGzipBytes = outputs.filter((output) => firstLoad.has(output.file)).reduce((sum, output) => sum + output.gzipBytes, 0)
  for (const output of outputs.sort((a, b) => a.file.localeCompare(b.file))) {
    console.log(
      `${path.join(shownAs, output.file).padEnd(48)} ${kilobytes(output.bytes).padStart(9)}  gzip ${kilobytes(output.gzipBytes).padStart(9)}`,
    )
  }
  const dashboardGzipBytes = outputs
    .filter((output) => output.file.startsWith('dashboard.'))
    .reduce((sum, output) => sum + output.gzipBytes, 0)
  console.log(`signing page first load (sign.js, its static imports, sign.css), gzip: ${kilobytes(firstLoadGzipBytes)}`)
  console.log(`dashboard (dashboard.js, dashboard.css), gzip: ${kilobytes(dashboardGzipBytes)}`)
  return { metafile: result.metafile, outputs, firstLoad: [...firstLoad].sort(), firstLoadGzipBytes, dashboardGzipBytes }
}

/**
 * The Ledger libraries use Node's global Buffer. This gives exactly those modules an import of the browser polyfill
 * (the buffer package), so that it loads with the Ledger chunk; esbuild's inject would put it in every chunk.
 */
const ledgerBufferImport = {
  name: 'ledger-buffer-import',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]@ledgerhq[\\/].*\.js$/ }, async (args) => ({
      contents: `import { Buffer } from 'buffer';\n${await readFile(args.path, 'utf8')}`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }))
  },
}

/**
 * The files a browser fetches before the page works: the page's entries and what they import statically. (The
 * metafile marks every dynamically imported chunk as an entry point too, so the configured entries are matched.)
 */
function firstLoadFiles(metafile, root, outdir) {
  const relative = (file) => path.relative(outdir, path.resolve(root, file))
  const needed = new Set()
  const visit = (file) => {
    if (needed.has(relative(file))) return
    needed.add(relative(file))
    for (const imported of metafile.outputs[file]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path)
    }
  }
  const entries = new Set(ENTRY_POINTS.map((entry) => entry.in))
  for (const [file, output] of Object.entries(metafile.outputs)) {
    if (entries.has(output.entryPoint)) visit(file)
  }
  return needed
}

function kilobytes(bytes) {
  return `${(bytes / 1024).toFixed(1)} kB`
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildWeb()
}
