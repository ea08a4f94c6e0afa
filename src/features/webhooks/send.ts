// One HTTP attempt of a webhook delivery: POST, no redirects, a total time limit, and the SSRF rule enforced at connect time.
import http from 'node:http'
import https from 'node:https'
import { performance } from 'node:perf_hooks'
import { describeError, outboundTarget, redirectNotFollowed, USER_AGENT } from './outbound-http.js'

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

/** POSTs the body once. Never throws: every failure, including a malformed URL, is a result with ok false. */
export async function sendWebhook(request: WebhookRequest): Promise<WebhookSendResult> {
  const startedMs = performance.now()
  const finish = (outcome: Outcome): WebhookSendResult => ({ ...outcome, durationMs: performance.now() - startedMs })

  const target = outboundTarget(request.url, request.allowPrivateTargets)
  if ('error' in target) return finish(failure(target.error))
  const { url, agent } = target
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
  // once on a fresh socket. The receiver did not answer; it may still have read the delivery (a receiver that resets
  // after reading), which is why it de-duplicates on the delivery id (webhooks.md).
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
    // It settles the attempt itself: a request Node has already given up on emits nothing more when destroyed.
    const timer = setTimeout(
      () => {
        timedOut = true
        settle(failure(timeoutMessage))
        req.destroy()
      },
      Math.max(0, timeoutMs),
    )

    // A 101 answer with Upgrade: Node would close the socket and emit neither 'response' nor 'error'.
    req.on('upgrade', (res, socket) => {
      clearTimeout(timer)
      socket.destroy()
      settle(failure(`receiver switched protocols (HTTP ${res.statusCode}) instead of answering`, res.statusCode ?? null))
    })
    // And whatever else ends the request without either ('error' comes before 'close'; once answered, the timer still
    // covers reading the body, and the response's 'close' clears it).
    req.on('close', () => {
      if (settled) return
      clearTimeout(timer)
      settle(failure('the receiver closed the connection without answering'))
    })

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
        settle(failure(redirectNotFollowed(res.headers.location), statusCode, retryAfter))
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
