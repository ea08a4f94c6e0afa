// Packages that only some configurations use (Redis, SMTP, an XRPL node) are loaded when first needed rather than at
// start: a package once loaded stays in the process's memory for its lifetime, and these cost about 5 MB each
// (docs/performance.md, "Memory"). Synchronous, so that the constructors and factories that need them stay so.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** The package `name`, loaded the first time it is asked for (Node caches it after). `Module` is `typeof import(name)`. */
export function loadOnDemand<Module>(name: string): Module {
  return require(name) as Module
}
