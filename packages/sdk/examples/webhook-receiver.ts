// An example webhook receiver: checks X-Service-Signature on the raw body, answers quickly, then handles the event.
// Run: WEBHOOK_SECRET=whsec_... PORT=8080 npx tsx examples/webhook-receiver.ts
import { createServer, type Server } from 'node:http'
import { pathToFileURL } from 'node:url'
import { verifyWebhookSignature, type WebhookDelivery } from '../src/index.js'

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
      const rawBody = Buffer.concat(chunks)
      // Verify the exact bytes received: parsing and re-serialising the JSON would change them.
      if (
        !verifyWebhookSignature(
          rawBody,
          request.headers['x-service-signature'] as string | undefined,
          typeof secret === 'string' ? secret : secret(),
        )
      ) {
        return void response.writeHead(401).end()
      }
      // Answer first: the service retries a delivery that is not acknowledged in time.
      response.writeHead(204).end()
      // The same delivery may come twice (a retry after a lost answer): X-Countersign-Delivery tells them apart.
      const deliveryId = request.headers['x-countersign-delivery'] as string | undefined
      onEvent(JSON.parse(rawBody.toString('utf8')) as WebhookDelivery, deliveryId)
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
