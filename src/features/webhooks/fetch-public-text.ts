// The GET of a project's website proof (account-projects.ts), under the webhook rules of outbound-http.ts.
import http from 'node:http'
import https from 'node:https'
import { describeError, outboundTarget, redirectNotFollowed, USER_AGENT } from './outbound-http.js'

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
  const target = outboundTarget(rawUrl, options.allowPrivateTargets)
  if ('error' in target) return fail(target.error)
  const { url, agent } = target
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
    // A 101 answer with Upgrade: Node would close the socket and emit neither 'response' nor 'error'.
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      settle(fail(`switched protocols (HTTP ${res.statusCode}) instead of answering`, res.statusCode ?? null))
    })
    req.on('close', () => settle(fail('the connection closed without an answer')))
    req.on('response', (res) => {
      const statusCode = res.statusCode ?? 0
      if (statusCode >= 300 && statusCode < 400) {
        res.resume()
        return settle(fail(redirectNotFollowed(res.headers.location), statusCode))
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
