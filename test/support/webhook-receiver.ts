// A real HTTP receiver on 127.0.0.1 for webhook tests: records every request with its raw body, then answers as told.
// It checks signatures as a receiver would, independently of the service's code.
import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'

export interface ReceivedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  /** The bytes as they arrived, before any parsing. */
  rawBody: Buffer
  /** performance.now() when the body had arrived. */
  receivedAtMs: number
}

export type Responder = (request: ReceivedRequest, res: http.ServerResponse) => void

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>/hook */
  url: string
  /** The same server under another path, e.g. '/elsewhere'. */
  urlFor(path: string): string
  requests: ReceivedRequest[]
  /** How later requests are answered; 204 until set. */
  respondWith(responder: Responder): void
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

export const answer =
  (status: number, headers: Record<string, string> = {}, body = ''): Responder =>
  (_request, res) =>
    res.writeHead(status, headers).end(body)

/** Never answers: the request is left open until the client gives up or the receiver closes. */
export const hang: Responder = () => {}

export async function startWebhookReceiver(responder: Responder = answer(204)): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = []
  const waiters = new Set<() => void>()
  let respond = responder
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    // A sender killed mid-request resets the connection; that request is simply not recorded.
    req.on('error', () => {})
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        receivedAtMs: performance.now(),
      }
      requests.push(request)
      for (const waiter of waiters) waiter()
      respond(request, res)
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const urlFor = (path: string) => `http://127.0.0.1:${port}${path}`
  return {
    url: urlFor('/hook'),
    urlFor,
    requests,
    respondWith(next) {
      respond = next
    },
    waitFor(count, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve()
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`receiver got ${requests.length} of ${count} expected requests within ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The delivery ids received, with how many times each arrived. */
export function countByDeliveryId(requests: readonly ReceivedRequest[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const request of requests) {
    const id = String(request.headers['x-countersign-delivery'])
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return counts
}

/** The receiver's check of X-Service-Signature: HMAC-SHA256 of the raw bytes with the secret, compared in constant time. */
export function hasValidSignature(rawBody: Buffer, header: string | string[] | undefined, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`)
  const received = Buffer.from(typeof header === 'string' ? header : '')
  return received.length === expected.length && timingSafeEqual(received, expected)
}
