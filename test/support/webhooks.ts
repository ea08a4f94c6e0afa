// Steps shared by webhook tests: register a webhook through the API, resolve payloads, run a dispatcher by hand.
import assert from 'node:assert/strict'
import type { WebhookDispatcher } from '../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { newId } from '../../src/platform/crypto/ids.js'
import { bearer, type TestService } from './service.js'

export const SIGNED = {
  walletAdapter: 'xaman',
  signerAddress: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe',
  txHash: 'C53ECF838647FA5A4C780377025FEC7999AB4182590510CA461444B207AB74A9',
  txBlob: '12000022800000002400000001614000000000000064684000000000000000C7321ED',
}

export async function registerWebhook(
  t: TestService,
  apiKey: string,
  url: string,
  events?: string[],
): Promise<{ id: string; secret: string; events: string[] }> {
  const response = await t.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer(apiKey), payload: { url, events } })
  assert.equal(response.statusCode, 201, response.body)
  return response.json()
}

// A step of most webhook tests, so offered here as well.
export { createPayload } from './payloads.js'

/** Runs the dispatcher until nothing is due at the current (manual) time, and every send has been recorded. */
export async function dispatchAll(dispatcher: WebhookDispatcher): Promise<void> {
  let more: boolean
  do {
    more = await dispatcher.dispatchDue()
    await dispatcher.settled()
  } while (more)
}

/** Gives the project an owning account with this address, as a dashboard sign-in would. */
export async function setAccountEmail(t: TestService, projectId: string, email: string | null): Promise<void> {
  const db = t.service.ctx.storage.db
  const accountId = newId('acct')
  await db
    .insertInto('accounts')
    .values({ id: accountId, issuer: 'https://idp.test', subject: accountId, email, name: 'Owner', created_at: t.clock.now() })
    .execute()
  await db.updateTable('projects').set({ account_id: accountId }).where('id', '=', projectId).execute()
}

export async function deliveryRows(t: TestService, webhookId: string) {
  return t.service.ctx.storage.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}
