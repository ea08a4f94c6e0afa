// A PostgreSQL host that vanishes without a word (a failover's old primary, a partition): a statement in flight waits
// for an answer that never comes, on a connection with nothing to send. Only TCP keepalive notices; the service's
// connections have it, with the operating system's probes starting after 10 s of silence (database.ts).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, it } from 'node:test'
import { sql } from 'kysely'
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

  it('is noticed on a connection waiting in silence: every connection the service opens probes the server once idle 10 s', async () => {
    // The connection's own end, as the server sees it: its address on this machine.
    const { rows } = await sql<{ client_port: number; server_port: number }>`
      select client_port, inet_server_port() as server_port from pg_stat_activity where pid = pg_backend_pid()`.execute(storage.db)
    const { client_port: clientPort, server_port: serverPort } = rows[0]!
    // Now idle in the pool, as a connection whose statement was sent and acknowledged is at the TCP level.
    const timer = tcpTimer(clientPort, serverPort)
    assert.ok(timer, `the connection from port ${clientPort} to ${serverPort} is in the kernel's table`)
    assert.equal(timer.kind, 2, 'a keepalive timer is pending (without keepalive an idle connection has none)')
    assert.ok(
      timer.inSeconds > 0 && timer.inSeconds <= POSTGRES_KEEPALIVE_IDLE_MS / 1000,
      `the first probe within ${POSTGRES_KEEPALIVE_IDLE_MS / 1000} s of silence, not the system's two hours: ${timer.inSeconds} s`,
    )
  })
})
