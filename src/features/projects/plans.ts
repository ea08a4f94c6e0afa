// Plans and their limits (docs/interface.md §8). Operators override them with LIMITS_FREE / LIMITS_PRO.
export type PlanName = 'free' | 'pro'

export const PLAN_NAMES: readonly PlanName[] = ['free', 'pro']

export interface PlanLimits {
  requestsPerMinute: number
  minPollIntervalMs: number
  maxExpiresInSeconds: number
  monthlyPayloads: number
  /** Open live-status streams (SSE) a project may hold at once. */
  maxLiveStreams: number
}

export const DEFAULT_PLAN_LIMITS: Record<PlanName, PlanLimits> = {
  free: { requestsPerMinute: 20, minPollIntervalMs: 3000, maxExpiresInSeconds: 300, monthlyPayloads: 1000, maxLiveStreams: 10 },
  pro: { requestsPerMinute: 200, minPollIntervalMs: 1000, maxExpiresInSeconds: 86400, monthlyPayloads: 100000, maxLiveStreams: 500 },
}

/** The plan whose projects may have webhooks and receive their deliveries; every other plan is refused them. */
export const WEBHOOKS_PLAN: PlanName = 'pro'

export function planHasWebhooks(plan: PlanName): boolean {
  return plan === WEBHOOKS_PLAN
}

export const PLAN_LABELS: Record<PlanName, string> = { free: 'Free', pro: 'Pro' }

/** Share of the monthly payload limit at which the usage warning is recorded and mailed. */
export const USAGE_WARNING_PERCENT = 80

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value)
}

export function usageWarningThreshold(limits: PlanLimits): number {
  return Math.ceil((limits.monthlyPayloads * USAGE_WARNING_PERCENT) / 100)
}
