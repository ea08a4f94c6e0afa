// Follows submitted transactions to their final outcome in the background, on every instance (each follow is leased).
import type { ServiceContext } from '../../context.js'
import { type PeriodicTask, startPeriodicTask } from '../../platform/periodic-task.js'
import { FOLLOW_INTERVAL_MS } from './transaction-follower.js'

export function startTransactionFollower(ctx: ServiceContext): PeriodicTask {
  const task = startPeriodicTask('transaction-follower', FOLLOW_INTERVAL_MS / 2, () => ctx.follower.followDue(), ctx.logger)
  return task
}
