// The webhook benchmark's receiver, in a process of its own as an application's server would be: answers 204 to every
// POST and notes when each payload's delivery arrived. The parent (bench/webhooks.ts) talks to it over IPC: it is told
// the port, and asks for the receipts once a number of them has arrived.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'

/** Milliseconds since the epoch, with sub-millisecond precision: comparable across the two processes. */
const nowMs = () => performance.timeOrigin + performance.now()

const receivedAtMs = new Map<string, number>()
/** Deliveries of a payload's event that arrived after the first: a delivery sent twice. */
let duplicates = 0
let awaited = Number.POSITIVE_INFINITY

function answerIfDone(): void {
  if (receivedAtMs.size < awaited) return
  awaited = Number.POSITIVE_INFINITY
  process.send?.({ receivedAtMs: [...receivedAtMs], duplicates })
}

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload: { uuid: string } }
    if (receivedAtMs.has(body.payload.uuid)) duplicates++
    else receivedAtMs.set(body.payload.uuid, nowMs())
    response.writeHead(204).end()
    answerIfDone()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }))

process.on('message', (message: { awaitCount: number }) => {
  awaited = message.awaitCount
  answerIfDone()
})
process.on('disconnect', () => server.close(() => process.exit(0)))
