#!/usr/bin/env node
import { fileURLToPath } from 'node:url'
import { runOnSupportedNode } from './with-node.js'

/**
 * Node options for `countersign serve`. V8 sizes the young generation by the machine's memory: on a 24 GiB machine it grew
 * to 128 MB, so a service holding some 30 MB of live objects sat at 280-300 MB of RSS. Requests allocate short-lived
 * objects only, and 4 MB semi-spaces cost no measurable processor time a request. What outlives a few milliseconds
 * (a poll gate's window lives a second) is promoted, and V8 let the old generation grow to three times the live heap
 * before collecting it (97 MB against some 30 MB live, after a million reads), pages it then kept: the old generation
 * is collected when it has grown by 20% instead, for no measurable processor time either (docs/performance.md,
 * "2026-11-24: memory after a million payloads"). V8 allocates straight into the old generation from an allocation site
 * whose objects it saw surviving (pretenuring): a burst of creations left one of the reads' sites there in a third of
 * the processes, each read's garbage then filled the old generation, and a major collection came every quarter second
 * (20 against 2 in 5 seconds of reads, 150 to 210 µs a read against 80 to 120); without pretenuring, none in 15 runs
 * (docs/performance.md, "2026-11-26, evening"). An operator's own --max-semi-space-size in NODE_OPTIONS (V8 reads it
 * with dashes or underscores) means they size V8's heap themselves: then none of these is added.
 */
export const SERVE_NODE_OPTIONS = ['--max-semi-space-size=4', '--heap-growing-percent=20', '--no-allocation-site-pretenuring']

/**
 * glibc gives each thread that allocates its own malloc arena (up to 8 a core); the service's threads (libuv's pool, V8's
 * helpers) held about 23 MB in four of them after a million payloads. Two arenas hold the same for less. An operator's
 * own MALLOC_ARENA_MAX wins.
 */
export const SERVE_MALLOC_ARENA_MAX = '2'

const args = process.argv.slice(2)
const serving = args[0] === 'serve'
const ownChoice = /--max[-_]semi[-_]space[-_]size/.test(process.env.NODE_OPTIONS ?? '')
const nodeOptions = serving && !ownChoice ? SERVE_NODE_OPTIONS : []
const env =
  serving && process.env.MALLOC_ARENA_MAX === undefined ? { ...process.env, MALLOC_ARENA_MAX: SERVE_MALLOC_ARENA_MAX } : process.env
await runOnSupportedNode(fileURLToPath(new URL('../dist/cli.js', import.meta.url)), args, nodeOptions, env)
