// Follows submitted transactions to their final outcome in the background, on every instance (each follow is leased),
// and recovers submissions whose instance stopped before the node answered (each claim is leased).
import type { ServiceContext } from '../../context.js'
import { type PeriodicTask, startPeriodicTask } from '../../platform/periodic-task.js'
import { FOLLOW_INTERVAL_MS } from './transaction-follower.js'

export function startTransactionFollower(ctx: ServiceContext): PeriodicTask {
  // Recovering a submission moves its payload to signed and starts its follow: it goes first.
  const step = async () => {
    const moreSubmissions = await ctx.signing.submissions.recoverLapsed()
    const moreFollows = await ctx.follower.followDue()
    return moreSubmissions || moreFollows
  }
  const task = startPeriodicTask('transaction-follower', FOLLOW_INTERVAL_MS / 2, step, ctx.logger)
  return task
}
