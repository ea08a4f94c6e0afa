#!/usr/bin/env node
import { fileURLToPath } from 'node:url'
import { runOnSupportedNode } from './with-node.js'

await runOnSupportedNode(fileURLToPath(new URL('../dist/cli.js', import.meta.url)), process.argv.slice(2))
