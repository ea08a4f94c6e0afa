// Expires pending payloads whose time has passed, even when nobody reads them, so their events go out.
import type { ServiceContext } from '../../context.js'
import { type PeriodicTask, startPeriodicTask } from '../../platform/periodic-task.js'

const SWEEP_INTERVAL_MS = 1_000
const SWEEP_BATCH_SIZE = 500

export function startExpirySweeper(ctx: ServiceContext): PeriodicTask {
  return startPeriodicTask(
    'expiry-sweeper',
    SWEEP_INTERVAL_MS,
    async () => (await ctx.payloads.expireOverdue(SWEEP_BATCH_SIZE)) === SWEEP_BATCH_SIZE,
    ctx.logger,
  )
}
