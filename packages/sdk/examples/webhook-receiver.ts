// An example webhook receiver: verifies the raw body (Standard Webhooks signature and timestamp), answers quickly, then
// handles the event.
// Run: WEBHOOK_SECRET=whsec_... PORT=8080 npx tsx examples/webhook-receiver.ts
import { createServer, type Server } from 'node:http'
import { pathToFileURL } from 'node:url'
import { verifyWebhook, type WebhookDelivery, WebhookVerificationError } from '../src/index.js'

/** Deliveries are a few hundred bytes; anything far larger is not one. */
const MAX_BODY_BYTES = 64 * 1024

/** `secret` may be a function, read at each delivery: the secret can then be stored after the receiver is up. */
export function createWebhookReceiver(
  secret: string | (() => string),
  onEvent: (delivery: WebhookDelivery, deliveryId: string | undefined) => void,
): Server {
  return createServer((request, response) => {
    if (request.method !== 'POST') return void response.writeHead(405).end()
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) request.destroy()
      else chunks.push(chunk)
    })
    request.on('end', () => {
      let delivery: WebhookDelivery
      try {
        // Verify the exact bytes received (parsing and re-serialising the JSON would change them), the delivery id, and
        // a timestamp within 5 minutes, so that a captured delivery cannot be replayed later.
        delivery = verifyWebhook(Buffer.concat(chunks), request.headers, typeof secret === 'string' ? secret : secret())
      } catch (error) {
        if (error instanceof WebhookVerificationError) return void response.writeHead(401).end()
        throw error
      }
      // Answer first: the service retries a delivery that is not acknowledged in time.
      response.writeHead(204).end()
      // The same delivery may come twice (a retry after a lost answer): webhook-id tells them apart.
      onEvent(delivery, request.headers['webhook-id'] as string | undefined)
    })
  })
}

/** One line per delivery. A test event ("Send test event" in the dashboard) has no payload, so `event` is checked first. */
export function describeDelivery(delivery: WebhookDelivery, deliveryId: string | undefined): string {
  if (delivery.event === 'webhook.test') return `${deliveryId ?? '-'} test event from webhook ${delivery.webhookId}`
  return `${deliveryId ?? '-'} ${delivery.event}: payload ${delivery.payload.uuid} is ${delivery.payload.status}`
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const secret = process.env.WEBHOOK_SECRET
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the secret shown when the webhook was created')
  createWebhookReceiver(secret, (delivery, deliveryId) => console.log(describeDelivery(delivery, deliveryId))).listen(
    Number(process.env.PORT ?? 8080),
  )
}
