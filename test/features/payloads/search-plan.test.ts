// The payload search must find its rows through an index on both databases: a million payloads scanned whole took
// 460 ms on PostgreSQL for each search (docs/pages.md, "Payload search").
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, it } from 'node:test'
import { CompiledQuery, sql } from 'kysely'
import { listQuery } from '../../../src/features/payloads/repository.js'
import type { DbOrTx } from '../../../src/platform/db/database.js'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'

const PAYLOADS = 3_000
const SIGNERS = ['rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf']

forEachDatabase('the payload search plan', (dialect) => {
  let t: TestService
  let projectId: string
  let uuids: string[]
  before(async () => {
    t = await startTestService(dialect)
    projectId = (await t.createProject('pro')).projectId
    const other = (await t.createProject('pro')).projectId
    const rows = Array.from({ length: PAYLOADS }, (_, index) => ({
      uuid: randomUUID(),
      project_id: index % 2 === 0 ? projectId : other,
      type: 'sign',
      status: index % 3 === 0 ? 'signed' : 'expired',
      expires_at: 1_700_000_000_000 + index,
      created_at: 1_700_000_000_000 + index,
      signer_address: index % 3 === 0 ? SIGNERS[index % SIGNERS.length] : null,
    }))
    const db = t.service.ctx.storage.db
    for (let start = 0; start < rows.length; start += 500)
      await db
        .insertInto('payloads')
        .values(rows.slice(start, start + 500))
        .execute()
    await sql`analyze`.execute(db)
    uuids = rows.filter((row) => row.project_id === projectId).map((row) => row.uuid)
  })
  after(() => t.stop())

  /** How the database would run the search `q`, one line per step. */
  const planOf = async (q: string): Promise<string> => {
    const page = { limit: 51, offset: 0, search: q }
    const db = t.service.ctx.storage.db
    if (dialect === 'sqlite') {
      const compiled = listQuery(db, projectId, page).compile()
      const rows = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      )
      return rows.rows.map((row) => row.detail).join('\n')
    }
    // A scan of the whole table is priced out: the plan then shows whether an index can serve the search at all.
    return db.transaction().execute(async (trx: DbOrTx) => {
      await sql`set local enable_seqscan = off`.execute(trx)
      const compiled = listQuery(trx, projectId, page).compile()
      const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]))
      return rows.rows.map((row) => row['QUERY PLAN']).join('\n')
    })
  }

  it("finds a signer's payloads through the signer index, not by scanning the project's", async () => {
    const plan = await planOf(SIGNERS[0] as string)
    assert.match(plan, /payloads_project_signer/, plan)
  })

  it("finds a uuid's first characters through the primary key's range, not a scan", async () => {
    const plan = await planOf((uuids[7] as string).slice(0, 6))
    assert.match(plan, dialect === 'sqlite' ? /USING INDEX sqlite_autoindex_payloads_1 \(uuid>\? AND uuid<\?\)/ : /payloads_pkey/, plan)
    assert.doesNotMatch(plan, /Seq Scan|SCAN payloads/, plan)
  })

  it('finds the same payloads by a prefix as before: exactly those that start with it', async () => {
    const prefix = (uuids[11] as string).slice(0, 4)
    const found = await listQuery(t.service.ctx.storage.db, projectId, { limit: 1000, offset: 0, search: prefix }).execute()
    assert.deepEqual(found.map((row) => row.uuid).sort(), uuids.filter((uuid) => uuid.startsWith(prefix)).sort())
  })
})
