// Types of scripts/build-web.mjs, for the TypeScript code (tests) that imports it.
import type { Metafile } from 'esbuild'

export interface BuiltFile {
  /** Path relative to outdir. */
  file: string
  bytes: number
  gzipBytes: number
}

export function buildWeb(options?: { outdir?: string; minify?: boolean; shownAs?: string }): Promise<{
  /** The signing page's build (the dashboard is built apart). */
  metafile: Metafile
  outputs: BuiltFile[]
  /** The outputs a browser fetches before the page works (paths relative to outdir). */
  firstLoad: string[]
  firstLoadGzipBytes: number
  /** dashboard.js and dashboard.css, gzipped. */
  dashboardGzipBytes: number
}>
