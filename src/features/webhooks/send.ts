// One HTTP attempt of a webhook delivery: POST, no redirects, a total time limit, and the SSRF rule enforced at connect time.
import { lookup as dnsLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction, type SocketConstructorOpts } from 'node:net'
import { performance } from 'node:perf_hooks'
import { describeForbiddenAddress } from './target-address.js'
import { webhookHost } from './url-policy.js'

export interface WebhookRequest {
  url: string
  /** Sent as UTF-8, byte for byte what was signed. */
  body: string
  headers: Record<string, string>
  /** Whole attempt: connecting, sending, and receiving the response status. */
  timeoutMs: number
  allowPrivateTargets: boolean
}

export interface WebhookSendResult {
  /** True for a 2xx response; error is null exactly when ok is true. */
  ok: boolean
  statusCode: number | null
  error: string | null
  /** The receiver's Retry-After header, unparsed. */
  retryAfter: string | undefined
  durationMs: number
}

/** The rest of a larger response is not read: receivers have nothing to tell the service beyond their status. */
const MAX_RESPONSE_BODY_BYTES = 64 * 1024

const USER_AGENT = 'Countersign-Webhooks/1'

/**
 * Sockets per receiver host. The cap is per host, never global, so a slow receiver ties up only its own sockets;
 * 64 leaves a healthy receiver enough parallel connections for well over 1,000 deliveries a second.
 */
const MAX_SOCKETS_PER_HOST = 64

/** Idle keep-alive sockets are closed after this; receivers usually close theirs sooner. */
const IDLE_SOCKET_TIMEOUT_MS = 30_000

class ForbiddenTargetError extends Error {
  constructor(address: string, description: string) {
    super(`refused to connect to ${address}, ${description}; webhook targets must be public`)
  }
}

/**
 * Resolves like the system resolver, then refuses the whole connection when any address is forbidden. It runs when
 * each socket connects, so a host that resolved to a public address at registration and to a private one now
 * (DNS rebinding) is still refused.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '')
    for (const { address } of addresses) {
      const forbidden = describeForbiddenAddress(address)
      if (forbidden !== undefined) return callback(new ForbiddenTargetError(address, forbidden), '')
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

/** POSTs the body once. Never throws: every failure, including a malformed URL, is a result with ok false. */
export async function sendWebhook(request: WebhookRequest): Promise<WebhookSendResult> {
  const startedMs = performance.now()
  const finish = (outcome: Outcome): WebhookSendResult => ({ ...outcome, durationMs: performance.now() - startedMs })

  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return finish(failure(`invalid url ${request.url}`))
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return finish(failure(`url scheme ${url.protocol} is not http or https`))
  // net.connect does not call the lookup for an IP literal, so a literal is judged here.
  const host = webhookHost(url)
  if (!request.allowPrivateTargets && isIP(host) !== 0) {
    const forbidden = describeForbiddenAddress(host)
    if (forbidden !== undefined) return finish(failure(new ForbiddenTargetError(host, forbidden).message))
  }

  const agent = (request.allowPrivateTargets ? anyTargetAgents : publicOnlyAgents)[url.protocol]
  const body = Buffer.from(request.body, 'utf8')
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...request.headers,
    'content-length': String(body.length),
  }
  const deadlineMs = startedMs + request.timeoutMs
  const timeoutMessage = `timed out after ${request.timeoutMs} ms`

  const first = await postOnce(url, agent, headers, body, deadlineMs - performance.now(), timeoutMessage)
  // A kept-alive socket can be closed by the receiver just as it is reused; Node's documented remedy is to retry
  // once on a fresh socket. The receiver did not answer, and it de-duplicates on the delivery id in any case.
  if (first.staleSocket && performance.now() < deadlineMs) {
    return finish(await postOnce(url, agent, headers, body, deadlineMs - performance.now(), timeoutMessage))
  }
  return finish(first)
}

type Outcome = Omit<WebhookSendResult, 'durationMs'>

function failure(error: string, statusCode: number | null = null, retryAfter?: string): Outcome {
  return { ok: false, statusCode, error, retryAfter }
}

function postOnce(
  url: URL,
  agent: http.Agent,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
  timeoutMessage: string,
): Promise<Outcome & { staleSocket?: boolean }> {
  return new Promise((resolve) => {
    let settled = false
    let timedOut = false
    const settle = (outcome: Outcome & { staleSocket?: boolean }) => {
      if (settled) return
      settled = true
      resolve(outcome)
    }

    let req: http.ClientRequest
    try {
      req = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', agent, headers })
    } catch (error) {
      // Invalid header names or values are rejected synchronously.
      return settle(failure(describeError(error)))
    }
    // The timer also covers reading the response body, so a receiver that stalls mid-body loses its socket.
    const timer = setTimeout(
      () => {
        timedOut = true
        req.destroy()
      },
      Math.max(0, timeoutMs),
    )

    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (timedOut) return settle(failure(timeoutMessage))
      settle({ ...failure(describeError(error)), staleSocket: req.reusedSocket && error.code === 'ECONNRESET' })
    })

    req.on('response', (res) => {
      const statusCode = res.statusCode ?? 0
      const retryAfter = res.headers['retry-after']
      if (statusCode >= 200 && statusCode < 300) settle({ ok: true, statusCode, error: null, retryAfter })
      else if (statusCode >= 300 && statusCode < 400) {
        settle(failure(`redirect to ${res.headers.location ?? '(no Location header)'} not followed`, statusCode, retryAfter))
      } else settle(failure(`receiver answered HTTP ${statusCode}`, statusCode, retryAfter))

      // The body is read and dropped so that the socket can be kept alive; past the cap the socket is closed instead.
      let receivedBytes = 0
      res.on('data', (chunk: Buffer) => {
        receivedBytes += chunk.length
        if (receivedBytes > MAX_RESPONSE_BODY_BYTES) res.destroy()
      })
      res.on('error', () => {})
      res.on('close', () => clearTimeout(timer))
    })

    req.end(body)
  })
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    // Node tries every resolved address (happy eyeballs) and reports all failures together.
    return error.errors.map(describeError).join('; ')
  }
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name
  return String(error)
}

export interface PublicGetResult {
  ok: boolean
  statusCode: number | null
  /** The body as UTF-8 (at most maxBytes) when ok. */
  body: string
  error: string | null
}

/**
 * GETs a small text resource from a URL that an account gave (a project's website proof), under the webhook rules:
 * public addresses only (checked when the socket connects), no redirects, a total time limit, a size cap.
 * Never throws.
 */
export async function fetchPublicText(
  rawUrl: string,
  options: { timeoutMs: number; maxBytes: number; allowPrivateTargets: boolean },
): Promise<PublicGetResult> {
  const fail = (error: string, statusCode: number | null = null): PublicGetResult => ({ ok: false, statusCode, body: '', error })
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return fail(`invalid url ${rawUrl}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`url scheme ${url.protocol} is not http or https`)
  const host = webhookHost(url)
  if (!options.allowPrivateTargets && isIP(host) !== 0) {
    const forbidden = describeForbiddenAddress(host)
    if (forbidden !== undefined) return fail(new ForbiddenTargetError(host, forbidden).message)
  }
  const agent = (options.allowPrivateTargets ? anyTargetAgents : publicOnlyAgents)[url.protocol]
  return new Promise((resolve) => {
    let settled = false
    const settle = (result: PublicGetResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const req = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'GET',
      agent,
      headers: { 'user-agent': USER_AGENT, accept: 'text/plain' },
    })
    const timer = setTimeout(() => {
      settle(fail(`timed out after ${options.timeoutMs} ms`))
      req.destroy()
    }, options.timeoutMs)
    req.on('error', (error) => settle(fail(describeError(error))))
    req.on('response', (res) => {
      const statusCode = res.statusCode ?? 0
      if (statusCode >= 300 && statusCode < 400) {
        res.resume()
        return settle(fail(`redirect to ${res.headers.location ?? '(no Location header)'} not followed`, statusCode))
      }
      if (statusCode < 200 || statusCode >= 300) {
        res.resume()
        return settle(fail(`answered HTTP ${statusCode}`, statusCode))
      }
      const chunks: Buffer[] = []
      let received = 0
      res.on('data', (chunk: Buffer) => {
        received += chunk.length
        if (received > options.maxBytes) {
          settle(fail(`answered more than ${options.maxBytes} bytes`, statusCode))
          res.destroy()
          return
        }
        chunks.push(chunk)
      })
      res.on('error', (error) => settle(fail(describeError(error), statusCode)))
      res.on('end', () => settle({ ok: true, statusCode, body: Buffer.concat(chunks).toString('utf8'), error: null }))
    })
    req.end()
  })
}
