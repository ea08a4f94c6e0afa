// Run as a child process by the crash-safety test: starts the service with its workers on DATABASE_URL, then resolves
// payloads of PROJECT_ID in a loop (rejections and cancellations) until it is killed.
import { setImmediate } from 'node:timers/promises'
import { loadConfig } from '../../src/config.js'
import { startService } from '../../src/main.js'
import { createLogger } from '../../src/platform/logger.js'

const projectId = process.env.PROJECT_ID
if (!projectId) throw new Error('PROJECT_ID is required')

const service = await startService(loadConfig(), { listen: false, logger: createLogger('warn') })
// The test holds stdin open; if the test process dies, this one follows instead of running on.
process.stdin.on('close', () => process.exit(0))
process.stdin.resume()

for (let n = 0; n < 100_000; n++) {
  const payload = await service.ctx.payloads.create({ projectId, plan: 'pro' }, { type: 'signMessage', message: `Order ${n}` })
  if (n % 2 === 0) await service.ctx.payloads.reject(payload.uuid, 'xaman')
  else await service.ctx.payloads.cancel(projectId, payload.uuid)
  // As between HTTP requests: SQLite answers synchronously, and the workers' timers need a turn of the event loop.
  await setImmediate()
}
await service.stop()
