// An HTTP server on 127.0.0.1 that speaks the Xaman platform API at the boundary (POST and GET
// /api/v1/platform/payload), with the shapes of the xumm-sdk type definitions; the test plays the Xaman user.
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface XamanDoubleRequest {
  uuid: string
  body: Record<string, unknown>
  headers: IncomingMessage['headers']
}

export interface XamanDouble {
  /** http://127.0.0.1:<port>, for XAMAN_API_URL. */
  url: string
  apiKey: string
  apiSecret: string
  /** Every sign request created, in order. */
  created: XamanDoubleRequest[]
  /** How many times each sign request was read. */
  reads: Map<string, number>
  /** The user signs in Xaman: the request resolves signed with this blob and account. */
  sign(uuid: string, hex: string, account: string): void
  /** The user rejects in Xaman. */
  reject(uuid: string): void
  expire(uuid: string): void
  /** Every call answers 503 while down. */
  setDown(down: boolean): void
  /**
   * The next call (with `uuid`, the next read of that sign request) is answered 200 with this body as it is: a hostile
   * or broken Xaman.
   */
  answerNextCallWith(body: string, uuid?: string): void
  close(): Promise<void>
}

interface State {
  resolved: boolean
  signed: boolean
  cancelled: boolean
  expired: boolean
  hex: string | null
  account: string | null
}

export async function startXamanDouble(): Promise<XamanDouble> {
  const apiKey = randomUUID()
  const apiSecret = randomUUID()
  const created: XamanDoubleRequest[] = []
  const reads = new Map<string, number>()
  const states = new Map<string, State>()
  let down = false
  let nextAnswer: { body: string; uuid: string | undefined } | undefined

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    if (down) return send(response, 503, { error: { reference: randomUUID(), code: 503 } })
    if (nextAnswer !== undefined && (nextAnswer.uuid === undefined || request.url?.endsWith(`/payload/${nextAnswer.uuid}`))) {
      const { body } = nextAnswer
      nextAnswer = undefined
      return response.writeHead(200, { 'content-type': 'application/json' }).end(body)
    }
    if (request.headers['x-api-key'] !== apiKey || request.headers['x-api-secret'] !== apiSecret) {
      return send(response, 403, { error: { reference: randomUUID(), code: 812 } })
    }
    const path = new URL(request.url ?? '/', 'http://double').pathname
    if (request.method === 'POST' && path === '/api/v1/platform/payload') {
      const uuid = randomUUID()
      created.push({ uuid, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: request.headers })
      states.set(uuid, { resolved: false, signed: false, cancelled: false, expired: false, hex: null, account: null })
      return send(response, 200, {
        uuid,
        next: { always: `https://xumm.app/sign/${uuid}` },
        refs: {
          qr_png: `https://xumm.app/sign/${uuid}_q.png`,
          qr_matrix: `https://xumm.app/sign/${uuid}_q.json`,
          qr_uri_quality_opts: ['m', 'q', 'h'],
          websocket_status: `wss://xumm.app/sign/${uuid}`,
        },
        pushed: false,
      })
    }
    const match = /^\/api\/v1\/platform\/payload\/([0-9a-f-]+)$/.exec(path)
    const state = match ? states.get(match[1] as string) : undefined
    if (request.method === 'GET' && match && state) {
      const uuid = match[1] as string
      reads.set(uuid, (reads.get(uuid) ?? 0) + 1)
      return send(response, 200, {
        meta: {
          exists: true,
          uuid,
          multisign: false,
          submit: false,
          resolved: state.resolved,
          signed: state.signed,
          cancelled: state.cancelled,
          expired: state.expired,
        },
        response: { hex: state.hex, txid: null, account: state.account, resolved_at: state.resolved ? new Date().toISOString() : null },
        custom_meta: {},
      })
    }
    return send(response, 404, { error: { reference: randomUUID(), code: 404 } })
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.writeHead(500).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const change = (uuid: string, changes: Partial<State>) => {
    const state = states.get(uuid)
    if (state === undefined) throw new Error(`no Xaman sign request ${uuid}`)
    Object.assign(state, changes)
  }

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    apiSecret,
    created,
    reads,
    sign: (uuid, hex, account) => change(uuid, { resolved: true, signed: true, hex, account }),
    reject: (uuid) => change(uuid, { resolved: true }),
    expire: (uuid) => change(uuid, { expired: true }),
    setDown(value) {
      down = value
    },
    answerNextCallWith(body, uuid) {
      nextAnswer = { body, uuid }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
