// The service's emails, as plain text: which project, what happened, what to do next.
import { toIso } from '../../platform/utc.js'
import { PLAN_LABELS, type PlanName } from '../projects/plans.js'
import { DELIVERY_TIMEOUT_MS } from '../webhooks/model.js'

export interface EmailContent {
  subject: string
  text: string
}

export interface UsageWarningFacts {
  projectName: string
  projectId: string
  plan: PlanName
  /** Payloads created this month so far. */
  used: number
  limit: number
  /** UTC calendar month, YYYY-MM. */
  month: string
  dashboardUrl: string
}

export interface WebhookFailureFacts {
  projectName: string
  projectId: string
  webhookUrl: string
  webhookId: string
  event: string
  payloadUuid: string
  attempts: number
  lastError: string
  dashboardUrl: string
}

const SIGNATURE = '-- \nCountersign'
const count = new Intl.NumberFormat('en-US')
const monthName = new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' })
const dayName = new Intl.DateTimeFormat('en-US', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })

/** The 80% monthly usage warning, sent once per project per month. */
export function usageWarningEmail(facts: UsageWarningFacts): EmailContent {
  const { projectName, projectId, plan, used, limit, month, dashboardUrl } = facts
  const [year, monthNumber] = month.split('-').map(Number) as [number, number]
  const monthStartMs = Date.UTC(year, monthNumber - 1, 1)
  const nextMonthStartMs = Date.UTC(year, monthNumber, 1)
  const percent = Math.floor((used / limit) * 100)
  const remaining = Math.max(0, limit - used)
  const raiseLimit =
    plan === 'free'
      ? '- Move the project to the Pro plan, which allows more payloads a month.'
      : '- Ask the operator of this Countersign service for a higher monthly limit.'
  return {
    subject: `Countersign: ${projectName} has used ${percent}% of its monthly payloads`,
    text: [
      'Hello,',
      '',
      `Your project "${projectName}" (${projectId}) has created ${count.format(used)} of the ${count.format(limit)} payloads ` +
        `its ${PLAN_LABELS[plan]} plan allows in ${monthName.format(monthStartMs)} (${percent}%). ${count.format(remaining)} remain.`,
      '',
      `Once the limit is reached, creating a payload fails with HTTP 403 until the count starts again on ${dayName.format(nextMonthStartMs)} (UTC). ` +
        'Payloads already created are not affected.',
      '',
      'What you can do:',
      raiseLimit,
      '- Check for unexpected traffic, such as a retry loop creating payloads, in the project analytics.',
      `- See the project's usage in the dashboard: ${dashboardUrl}`,
      '',
      'This warning is sent once per project per month.',
      '',
      SIGNATURE,
    ].join('\n'),
  }
}

/** The alert sent when a webhook delivery has failed its last attempt. */
export function webhookFailureEmail(facts: WebhookFailureFacts): EmailContent {
  const { projectName, projectId, webhookUrl, webhookId, event, payloadUuid, attempts, lastError, dashboardUrl } = facts
  return {
    subject: `Countersign: a webhook delivery for ${projectName} failed`,
    text: [
      'Hello,',
      '',
      `A webhook delivery of your project "${projectName}" (${projectId}) failed on all ${attempts} attempts, ` +
        'and the service has stopped trying it. Your application has not been told of this event by webhook.',
      '',
      `Webhook:    ${webhookId} ${webhookUrl}`,
      `Event:      ${event}`,
      `Payload:    ${payloadUuid}`,
      `Last error: ${lastError}`,
      '',
      'What to do next:',
      `1. Fix the receiver at ${webhookUrl}: it must answer a POST with a 2xx status within ${DELIVERY_TIMEOUT_MS / 1000} seconds, without redirecting.`,
      `2. Catch up on the event: GET /api/v1/payloads/${payloadUuid} returns the payload's current state.`,
      `3. Once the receiver works, retry the delivery from the dashboard, or list deliveries with GET /api/v1/webhooks/${webhookId}/deliveries ` +
        'and retry one with POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry.',
      '',
      `Dashboard: ${dashboardUrl}`,
      '',
      SIGNATURE,
    ].join('\n'),
  }
}

export interface WebhookDisabledFacts {
  projectName: string
  projectId: string
  webhookUrl: string
  webhookId: string
  failingSinceMs: number
  disabledAtMs: number
  lastError: string
  dashboardUrl: string
}

/** The notice sent when a webhook is disabled because every delivery to it failed for days. */
export function webhookDisabledEmail(facts: WebhookDisabledFacts): EmailContent {
  const { projectName, projectId, webhookUrl, webhookId, failingSinceMs, disabledAtMs, lastError, dashboardUrl } = facts
  const since = toIso(failingSinceMs)
  return {
    subject: `Countersign: a webhook of ${projectName} was disabled`,
    text: [
      'Hello,',
      '',
      `Every delivery to a webhook of your project "${projectName}" (${projectId}) has failed since ${since}, ` +
        'so the service disabled the webhook: it receives no events until it is enabled again.',
      '',
      `Webhook:     ${webhookId} ${webhookUrl}`,
      `Failing:     since ${since}`,
      `Disabled at: ${toIso(disabledAtMs)}`,
      `Last error:  ${lastError}`,
      '',
      'What to do next:',
      `1. Fix the receiver at ${webhookUrl}: it must answer a POST with a 2xx status within ${DELIVERY_TIMEOUT_MS / 1000} seconds, without redirecting.`,
      `2. Enable the webhook: POST /api/v1/webhooks/${webhookId}/enable`,
      `3. Send the missed deliveries again: POST /api/v1/webhooks/${webhookId}/replay with {"since": "${since}"}.`,
      '   Events that happened while the webhook was disabled made no deliveries: list them with GET /api/v1/payloads.',
      '',
      `Dashboard: ${dashboardUrl}`,
      '',
      SIGNATURE,
    ].join('\n'),
  }
}
