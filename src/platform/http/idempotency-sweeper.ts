// Deletes Idempotency-Keys past their 24 hours, so that the table holds about one day of creations.
import type { ServiceContext } from '../../context.js'
import { idempotencyKeysRepository } from '../db/idempotency-keys-repository.js'
import { type PeriodicTask, startPeriodicTask } from '../periodic-task.js'

const SWEEP_INTERVAL_MS = 60_000

export function startIdempotencyKeySweeper(ctx: ServiceContext): PeriodicTask {
  return startPeriodicTask(
    'idempotency-key-sweeper',
    SWEEP_INTERVAL_MS,
    async () => {
      await idempotencyKeysRepository.deleteExpired(ctx.storage.db, ctx.clock.now())
      return false
    },
    ctx.logger,
  )
}
