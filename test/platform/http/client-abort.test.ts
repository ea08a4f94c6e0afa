// A client that closes its connection in the middle of a request's body: Node reports it as ECONNRESET with a 400,
// which is the client's doing, not a dependency away. It must not be logged as one (a warn line with a stack, saying
// the database may be down), nor answered as one: anyone can open a connection and drop it.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../../../src/config.js'
import { startService } from '../../../src/main.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { createLogger } from '../../../src/platform/logger.js'
import { createTestDatabase } from '../../support/databases.js'

it('a body cut short by the client is not logged as a dependency unavailable', async () => {
  const lines: { level: number; msg?: string }[] = []
  const logger = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) })
  const database = await createTestDatabase('sqlite')
  const service = await startService(loadConfig({ DATABASE_URL: database.url, PORT: '0' }), {
    clock: new ManualClock(),
    logger,
    listen: true,
    workers: false,
  })
  try {
    const { port } = new URL(service.url ?? '')
    for (const path of [
      '/api/v1/sign/00000000-0000-4000-8000-000000000000/approve',
      '/api/v1/sign/00000000-0000-4000-8000-000000000000/reject',
    ]) {
      const socket = connect(Number(port), '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type":"connect"`)
      await sleep(50)
      socket.destroy()
    }
    // The service learns of each close within milliseconds; a warn line, when there is one, comes in that time.
    for (let waited = 0; waited < 1000 && !lines.some((line) => line.level >= 40); waited += 25) await sleep(25)
    const healthz = await fetch(`${service.url}/healthz`)
    assert.equal(healthz.status, 200, 'serving on')
    assert.deepEqual(
      lines.filter((line) => line.level >= 40),
      [],
      'nothing at warn or above: the client left, no dependency did',
    )
  } finally {
    await service.stop()
    await database.drop()
  }
})
