// Outbound HTTP to a URL an account gave (a webhook receiver, a project's website): keep-alive agents whose lookup
// refuses forbidden addresses when each socket connects (the SSRF rule, target-address.ts), and the checks of the URL
// itself before a request.
import { lookup as dnsLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction, type SocketConstructorOpts } from 'node:net'
import { A_PUBLIC_ADDRESS, describeForbiddenAddress } from './target-address.js'
import { webhookHost } from './url-policy.js'

export const USER_AGENT = 'Countersign-Webhooks/1'

/**
 * Sockets per receiver host. The cap is per host, never global, so a slow receiver ties up only its own sockets;
 * 64 leaves a healthy receiver enough parallel connections for well over 1,000 deliveries a second.
 */
const MAX_SOCKETS_PER_HOST = 64

/**
 * Idle keep-alive sockets are closed after this: before a receiver closes its end (Node's servers after 5 s, most
 * others later), so that a delivery seldom goes out on a socket the receiver is closing just then, which send.ts must
 * send again on a fresh one.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000

/** `what` names an address given as one, and never the address a name resolved to (url-policy.ts says why). */
class ForbiddenTargetError extends Error {
  constructor(what: string) {
    super(`refused to connect to ${what}; webhook targets must be public`)
  }
}

/**
 * Resolves like the system resolver, then refuses the whole connection when any address is forbidden. It runs when
 * each socket connects, so a host that resolved to a public address at registration and to a private one now
 * (DNS rebinding) is still refused.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    // A name that does not resolve is said the same way as one that resolves to a forbidden address (url-policy.ts).
    if (error || addresses.length === 0 || addresses.some(({ address }) => describeForbiddenAddress(address) !== undefined)) {
      return callback(new ForbiddenTargetError(`${hostname}: it does not resolve to ${A_PUBLIC_ADDRESS}`), '')
    }
    const [first] = addresses
    if (options.all || first === undefined) return callback(null, addresses)
    callback(null, first.address, first.family)
  })
}

function createAgents(lookup: LookupFunction | undefined) {
  // The agent passes socket options through to net.createConnection; noDelay sends each small request at once.
  const options: http.AgentOptions & Pick<SocketConstructorOpts, 'noDelay'> = {
    keepAlive: true,
    maxSockets: MAX_SOCKETS_PER_HOST,
    timeout: IDLE_SOCKET_TIMEOUT_MS,
    noDelay: true,
    ...(lookup ? { lookup } : {}),
  }
  return { 'http:': new http.Agent(options), 'https:': new https.Agent(options) }
}

// Separate pools per policy: a socket opened while private targets were allowed must never serve a request that forbids them.
const publicOnlyAgents = createAgents(publicOnlyLookup)
const anyTargetAgents = createAgents(undefined)

/**
 * The URL to request and the agent to request it with, or why not: a malformed URL, a scheme other than http or https,
 * or (unless private targets are allowed) an IP literal that is forbidden.
 */
export function outboundTarget(rawUrl: string, allowPrivateTargets: boolean): { url: URL; agent: http.Agent } | { error: string } {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return { error: `invalid url ${rawUrl}` }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: `url scheme ${url.protocol} is not http or https` }
  // net.connect does not call the lookup for an IP literal, so a literal is judged here.
  const host = webhookHost(url)
  if (!allowPrivateTargets && isIP(host) !== 0) {
    const forbidden = describeForbiddenAddress(host)
    if (forbidden !== undefined) return { error: new ForbiddenTargetError(`${host}, ${forbidden}`).message }
  }
  return { url, agent: (allowPrivateTargets ? anyTargetAgents : publicOnlyAgents)[url.protocol] }
}

/** The most of a redirect's Location a failure keeps: the receiver's text, kept in the delivery and sent in alerts. */
const MAX_LOCATION_CHARS = 200

/** A redirect's failure in words, with at most MAX_LOCATION_CHARS of its Location. */
export function redirectNotFollowed(location: string | undefined): string {
  if (location === undefined) return 'redirect to (no Location header) not followed'
  const shown = location.length > MAX_LOCATION_CHARS ? `${location.slice(0, MAX_LOCATION_CHARS)}…` : location
  return `redirect to ${shown} not followed`
}

/** A failed request's error in words. */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    // Node tries every resolved address (happy eyeballs) and reports all failures together.
    return error.errors.map(describeError).join('; ')
  }
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name
  return String(error)
}
