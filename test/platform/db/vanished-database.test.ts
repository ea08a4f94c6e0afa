// A PostgreSQL host that vanishes without a word (a failover's old primary, a partition): a statement in flight waits
// for an answer that never comes, on a connection with nothing to send. Only TCP keepalive notices; the service's
// connections have it, with the operating system's probes starting after 10 s of silence (database.ts).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { after, before, it, mock } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { openStorage, POSTGRES_KEEPALIVE_IDLE_MS, type Storage } from '../../../src/platform/db/database.js'
import { createTestDatabase, describePostgres, type TestDatabase } from '../../support/databases.js'

/** The kernel's clock ticks a second in /proc/net/tcp's timer column (USER_HZ). */
const TICKS_PER_SECOND = 100

/**
 * The timer of the TCP connection from local port `localPort` to `remotePort`, as the kernel shows it: which timer is
 * pending (0 none, 1 retransmission, 2 keepalive, 4 zero-window probe) and in how many seconds it fires.
 */
function tcpTimer(localPort: number, remotePort: number): { kind: number; inSeconds: number } | undefined {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, remote, state, , timer] = line.trim().split(/\s+/)
      // 01: established.
      if (state !== '01' || !local?.endsWith(hex(localPort)) || !remote?.endsWith(hex(remotePort)) || timer === undefined) continue
      const [kind, when] = timer.split(':')
      return { kind: Number.parseInt(kind ?? '', 16), inSeconds: Number.parseInt(when ?? '', 16) / TICKS_PER_SECOND }
    }
  }
  return undefined
}

describePostgres('a PostgreSQL host that vanishes', () => {
  let database: TestDatabase
  let storage: Storage
  before(async () => {
    database = await createTestDatabase('postgres')
    storage = openStorage(database.url)
  })
  after(async () => {
    await storage?.close()
    await database?.drop()
  })

  it('is noticed on a connection waiting in silence: every connection the service opens probes the server once idle 10 s', async (t) => {
    // The socket of the pooled connection a statement runs on, from the service's own end (a proxy in between would
    // show the server other ports).
    let socket: Socket | undefined
    const query = pg.Client.prototype.query
    const seen = mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
      socket ??= (this as unknown as { connection: { stream: Socket } }).connection.stream
      return (query as (...a: unknown[]) => unknown).apply(this, args)
    })
    try {
      await sql`select 1`.execute(storage.db)
    } finally {
      seen.mock.restore()
    }
    const { localPort, remotePort } = socket ?? {}
    if (localPort === undefined || remotePort === undefined) return t.skip('PostgreSQL over a unix socket: no TCP to keep alive')
    // Now idle in the pool, as a connection whose statement was sent and acknowledged is at the TCP level.
    const timer = tcpTimer(localPort, remotePort)
    assert.ok(timer, `the connection from port ${localPort} to ${remotePort} is in the kernel's table`)
    assert.equal(timer.kind, 2, 'a keepalive timer is pending (without keepalive an idle connection has none)')
    assert.ok(
      timer.inSeconds > 0 && timer.inSeconds <= POSTGRES_KEEPALIVE_IDLE_MS / 1000,
      `the first probe within ${POSTGRES_KEEPALIVE_IDLE_MS / 1000} s of silence, not the system's two hours: ${timer.inSeconds} s`,
    )
  })
})
