// The Xaman platform API (XAMAN_API_KEY, XAMAN_API_SECRET): creating a sign request and reading its result,
// server to server. The credentials never reach a browser.

export interface XamanSignRequestBody {
  /** The transaction template; Xaman adds Account, Fee and Sequence when the user signs. {TransactionType: 'SignIn'} for a sign-in. */
  txjson: Record<string, unknown>
  /** `signers`: only these accounts may sign (Xaman refuses the others in the app). */
  options: { submit: false; return_url?: { app?: string; web?: string }; signers?: string[] }
  custom_meta?: { instruction?: string }
}

export interface CreatedXamanSignRequest {
  uuid: string
  /** Where to send the user: opens Xaman on a phone, shows a QR code elsewhere. */
  deepLink: string
  /** A PNG of the QR code to scan with Xaman. */
  qrUrl: string
}

export interface XamanSignRequestState {
  signed: boolean
  resolved: boolean
  cancelled: boolean
  expired: boolean
  /** The signed blob, hex; set once signed. */
  hex: string | null
  /** The account that signed; set once signed. */
  account: string | null
}

export interface XamanClient {
  /** POST /api/v1/platform/payload. Throws XamanUnavailableError when Xaman cannot be reached or refuses. */
  createSignRequest(body: XamanSignRequestBody): Promise<CreatedXamanSignRequest>
  /** GET /api/v1/platform/payload/{uuid}. Throws XamanUnavailableError when Xaman cannot be reached or refuses. */
  getSignRequest(uuid: string): Promise<XamanSignRequestState>
}

export class XamanUnavailableError extends Error {
  override name = 'XamanUnavailableError'
}

export interface XamanClientOptions {
  /** https://xumm.app, or a test double. */
  apiUrl: string
  apiKey: string
  apiSecret: string
  /** Bound on each call. Default 10 seconds. */
  timeoutMs?: number
}

const DEFAULT_TIMEOUT_MS = 10_000
/** Xaman's answers are a few KB: a larger one is not Xaman's, and is not held in memory to find out. */
export const MAX_XAMAN_ANSWER_BYTES = 256 * 1024
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function createXamanClient(options: XamanClientOptions): XamanClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> => {
    let response: Response
    try {
      response = await fetch(`${options.apiUrl}/api/v1/platform/${path}`, {
        method,
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          'x-api-key': options.apiKey,
          'x-api-secret': options.apiSecret,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      })
    } catch (error) {
      throw new XamanUnavailableError(`Xaman cannot be reached: ${(error as Error).message}`, { cause: error })
    }
    let parsed: unknown
    try {
      const text = await readAtMost(response, MAX_XAMAN_ANSWER_BYTES)
      if (text === null) throw new XamanUnavailableError(`Xaman answered ${response.status} with more than ${MAX_XAMAN_ANSWER_BYTES} bytes`)
      parsed = JSON.parse(text)
    } catch (error) {
      if (error instanceof XamanUnavailableError) throw error
      if (error instanceof SyntaxError) throw new XamanUnavailableError(`Xaman answered ${response.status} with a body that is not JSON`)
      // The time limit, or the connection, ended while the body was on its way.
      throw new XamanUnavailableError(`Xaman's answer (${response.status}) was cut off: ${(error as Error).message}`, { cause: error })
    }
    if (!response.ok) {
      // Xaman's error shape: {error: {reference, code}}; the code and status are what an operator can look up.
      const code = (parsed as { error?: { code?: unknown } } | null)?.error?.code
      throw new XamanUnavailableError(
        `Xaman refused the request: status ${response.status}${code === undefined ? '' : `, code ${String(code)}`}`,
      )
    }
    if (typeof parsed !== 'object' || parsed === null) throw new XamanUnavailableError('Xaman answered with something other than an object')
    return parsed as Record<string, unknown>
  }

  return {
    async createSignRequest(body) {
      const created = await call('POST', 'payload', body)
      const next = asObject(created.next)
      const refs = asObject(created.refs)
      const deepLink = httpsUrl(next.always)
      const qrUrl = httpsUrl(refs.qr_png)
      if (typeof created.uuid !== 'string' || deepLink === undefined || qrUrl === undefined) {
        throw new XamanUnavailableError('Xaman created the sign request but its answer lacks uuid, next.always or refs.qr_png')
      }
      // The uuid is kept as the request's key (in one case, so that the same uuid is one key) and read back in a path.
      if (!UUID.test(created.uuid)) throw new XamanUnavailableError('Xaman created the sign request but its uuid is not a UUID')
      return { uuid: created.uuid.toLowerCase(), deepLink, qrUrl }
    },

    async getSignRequest(uuid) {
      const state = await call('GET', `payload/${encodeURIComponent(uuid)}`)
      const meta = asObject(state.meta)
      const response = asObject(state.response)
      return {
        signed: meta.signed === true,
        resolved: meta.resolved === true,
        cancelled: meta.cancelled === true,
        expired: meta.expired === true,
        hex: typeof response.hex === 'string' ? response.hex : null,
        account: typeof response.account === 'string' ? response.account : null,
      }
    },
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
}

/** An https URL, as the URL parser writes it: what Xaman's links are, and all the signing page takes for a link or an image. */
function httpsUrl(value: unknown): string | undefined {
  const url = typeof value === 'string' ? URL.parse(value) : null
  return url?.protocol === 'https:' && url.username === '' && url.password === '' ? url.href : undefined
}

/** The body as UTF-8, or null when it is longer than `maxBytes` (the rest is not read). */
async function readAtMost(response: Response, maxBytes: number): Promise<string | null> {
  if (response.body === null) return ''
  const chunks: Uint8Array[] = []
  let received = 0
  for await (const chunk of response.body) {
    received += chunk.byteLength
    if (received > maxBytes) return null
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
