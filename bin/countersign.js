#!/usr/bin/env node
import { fileURLToPath } from 'node:url'
import { runOnSupportedNode } from './with-node.js'

/**
 * Node options for `countersign serve`. V8 sizes the young generation by the machine's memory: on a 24 GiB machine it grew
 * to 128 MB, so a service holding some 30 MB of live objects sat at 280-300 MB of RSS. Requests
 * allocate short-lived objects only, and 4 MB semi-spaces cost no measurable processor time a request
 * (docs/performance.md, "Memory"). An operator's own --max-semi-space-size in NODE_OPTIONS wins.
 */
export const SERVE_NODE_OPTIONS = ['--max-semi-space-size=4']

const args = process.argv.slice(2)
const ownChoice = (process.env.NODE_OPTIONS ?? '').includes('--max-semi-space-size')
const nodeOptions = args[0] === 'serve' && !ownChoice ? SERVE_NODE_OPTIONS : []
await runOnSupportedNode(fileURLToPath(new URL('../dist/cli.js', import.meta.url)), args, nodeOptions)
