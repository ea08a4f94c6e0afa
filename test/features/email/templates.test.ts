import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { usageWarningEmail, webhookFailureEmail } from '../../../src/features/email/templates.js'

describe('usageWarningEmail', () => {
  const facts = {
    projectName: 'Shop',
    projectId: 'proj_1',
    plan: 'free' as const,
    used: 800,
    limit: 1000,
    month: '2026-12',
    dashboardUrl: 'https://countersign.example/dashboard/projects/proj_1',
  }

  it('says which project, how much of which month is used, when it resets, and what to do', () => {
    const { subject, text } = usageWarningEmail(facts)
    assert.equal(subject, 'Countersign: Shop has used 80% of its monthly payloads')
    assert.match(
      text,
      /"Shop" \(proj_1\) has created 800 of the 1,000 payloads its Free plan allows in December 2026 \(80%\)\. 200 remain\./,
    )
    assert.match(text, /fails with HTTP 403 until the count starts again on January 1, 2027 \(UTC\)/)
    assert.match(text, /Move the project to the Pro plan/)
    assert.ok(text.includes(facts.dashboardUrl))
  })

  it('does not offer Pro to a Pro project', () => {
    const { text } = usageWarningEmail({ ...facts, plan: 'pro', used: 80_000, limit: 100_000, month: '2026-02' })
    assert.match(text, /80,000 of the 100,000 payloads its Pro plan allows in February 2026/)
    assert.match(text, /starts again on March 1, 2026/)
    assert.doesNotMatch(text, /Move the project to the Pro plan/)
    assert.match(text, /higher monthly limit/)
  })
})

describe('webhookFailureEmail', () => {
  it('names the project, webhook, event, payload and last error, and the way to recover', () => {
    const { subject, text } = webhookFailureEmail({
      projectName: 'Shop',
      projectId: 'proj_1',
      webhookUrl: 'https://shop.example/hooks',
      webhookId: 'wh_1',
      event: 'payload.rejected',
      payloadUuid: '0b6f0c9e-7d3e-4a53-8f1c-2b9a1d5e4c10',
      attempts: 8,
      lastError: 'timed out after 10000 ms',
      dashboardUrl: 'https://countersign.example/dashboard/projects/proj_1',
    })
    assert.equal(subject, 'Countersign: a webhook delivery for Shop failed')
    for (const fact of [
      '"Shop" (proj_1)',
      'all 8 attempts',
      'wh_1 https://shop.example/hooks',
      'payload.rejected',
      'timed out after 10000 ms',
      'answer a POST with a 2xx status within 10 seconds, without redirecting',
      'GET /api/v1/payloads/0b6f0c9e-7d3e-4a53-8f1c-2b9a1d5e4c10',
      'GET /api/v1/webhooks/wh_1/deliveries',
      'https://countersign.example/dashboard/projects/proj_1',
    ]) {
      assert.ok(text.includes(fact), fact)
    }
  })
})
