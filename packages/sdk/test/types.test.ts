// The SDK restates the API's shapes so that it depends on nothing from the server; these checks fail (in `tsc`) as
// soon as a restated type and the server's drift apart in either direction.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as server from '../../../src/features/payloads/model.js'
import {
  type DeliveryEvent,
  type DeliveryState,
  type DeliveryView,
  payloadEventBody,
  testEventBody,
  type WEBHOOK_TEST_EVENT,
  type WebhookView,
} from '../../../src/features/webhooks/model.js'
import type {
  CreatedPayload,
  Delivery,
  Payload,
  PayloadEvent,
  PayloadEventDelivery,
  PayloadStatus,
  PayloadType,
  Webhook,
  WebhookDelivery,
  WebhookPayload,
  WebhookTestDelivery,
} from '../src/index.js'

/** true when each type is assignable to the other; a `true` written where this is false does not compile. */
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

const signedPayload: server.Payload = {
  uuid: '4c6f6e67-0000-4000-8000-000000000001',
  projectId: 'prj_test',
  type: 'sign',
  status: 'signed',
  transaction: { TransactionType: 'Payment' },
  message: null,
  challenge: null,
  returnUrl: null,
  customInstructions: null,
  expiresAtMs: Date.UTC(2026, 0, 15, 12, 5),
  createdAtMs: Date.UTC(2026, 0, 15, 12, 0),
  resolvedAtMs: Date.UTC(2026, 0, 15, 12, 1),
  signerAddress: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe',
  txHash: 'C53ECF838647FA5A4C780377025FEC7999AB4182590510CA461444B207AB74A9',
  txBlob: '1200002280000000',
  walletAdapter: 'gemwallet',
  publicKey: null,
  signature: null,
  submitEngineResult: null,
  validatedResult: null,
  validatedLedgerIndex: null,
  signers: null,
  outcome: null,
  deliveredAmount: null,
  multisign: null,
  externalId: 'order-42',
  metadata: { cart: [1, 2] },
}

describe("the SDK's types and the server's", () => {
  it('are assignable both ways', () => {
    const agree: [
      MutuallyAssignable<PayloadType, server.PayloadType>,
      MutuallyAssignable<PayloadStatus, server.PayloadStatus>,
      MutuallyAssignable<PayloadEvent, server.PayloadEvent>,
      MutuallyAssignable<Payload, server.PayloadView>,
      MutuallyAssignable<CreatedPayload, ReturnType<typeof server.toCreatedView>>,
      MutuallyAssignable<WebhookPayload, ReturnType<typeof server.toWebhookPayload>>,
      MutuallyAssignable<Webhook, WebhookView>,
      MutuallyAssignable<WebhookTestDelivery['event'], typeof WEBHOOK_TEST_EVENT>,
      MutuallyAssignable<WebhookDelivery['event'], DeliveryEvent>,
      MutuallyAssignable<Delivery, DeliveryView>,
      MutuallyAssignable<Delivery['state'], DeliveryState>,
    ] = [true, true, true, true, true, true, true, true, true, true, true]
    assert.ok(agree.every((check) => check))
  })

  it('describe the delivery bodies the server sends, which are strings to the type checker', () => {
    const payloadEvent: PayloadEventDelivery = { event: 'payload.signed', payload: server.toWebhookPayload(signedPayload) }
    assert.deepEqual(JSON.parse(payloadEventBody('payload.signed', signedPayload)), payloadEvent)
    const testEvent: WebhookTestDelivery = { event: 'webhook.test', webhookId: 'wh_test', createdAt: '2026-01-15T12:00:00.000Z' }
    assert.deepEqual(JSON.parse(testEventBody('wh_test', Date.UTC(2026, 0, 15, 12))), testEvent)
  })
})
