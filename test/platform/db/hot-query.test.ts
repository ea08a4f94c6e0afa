// Hot queries: compiled once, the same answers as Kysely's own execution, part of the transaction they run in, on
// SQLite never run inside another caller's open transaction, and on PostgreSQL prepared once per connection.
import assert from 'node:assert/strict'
import { after, before, it, mock } from 'node:test'
import { CamelCasePlugin, type KyselyPlugin, sql } from 'kysely'
import { openStorage, type Storage, type Tx } from '../../../src/platform/db/database.js'
import { HotQuery } from '../../../src/platform/db/hot-query.js'
import { migrateToLatest } from '../../../src/platform/db/migrations.js'
import { createTestDatabase, forEachDatabase, type TestDatabase } from '../../support/databases.js'

const insertProject = new HotQuery((db, p: { id: string; name: string }) =>
  db.insertInto('projects').values({ id: p.id, name: p.name, plan: 'free', created_at: 1 }),
)
const projectByName = new HotQuery((db, p: { name: string }) => db.selectFrom('projects').select(['id', 'plan']).where('name', '=', p.name))
const renameProject = new HotQuery((db, p: { id: string; name: string }) =>
  db.updateTable('projects').set({ name: p.name }).where('id', '=', p.id).returning('name'),
)

forEachDatabase('hot queries', (dialect) => {
  let database: TestDatabase
  let storage: Storage

  before(async () => {
    database = await createTestDatabase(dialect)
    storage = openStorage(database.url)
    await migrateToLatest(storage)
  })
  after(async () => {
    await storage.close()
    await database.drop()
  })

  it('fills in the values of each call and returns the rows', async () => {
    assert.deepEqual(await insertProject.execute(storage.db, { id: 'proj_a', name: 'alpha' }), [])
    await insertProject.execute(storage.db, { id: 'proj_b', name: 'beta' })
    assert.deepEqual(await projectByName.execute(storage.db, { name: 'beta' }), [{ id: 'proj_b', plan: 'free' }])
    assert.deepEqual(await projectByName.executeTakeFirst(storage.db, { name: 'alpha' }), { id: 'proj_a', plan: 'free' })
    assert.equal(await projectByName.executeTakeFirst(storage.db, { name: 'gamma' }), undefined)
    const renamed = await renameProject.execute(storage.db, { id: 'proj_a', name: 'alpha-2' })
    assert.deepEqual(renamed, [{ name: 'alpha-2' }])
    const kysely = await storage.db.selectFrom('projects').select(['id', 'plan']).where('name', '=', 'alpha-2').execute()
    assert.deepEqual(kysely, [{ id: 'proj_a', plan: 'free' }])
  })

  it('takes part in a transaction and rolls back with it', async () => {
    await assert.rejects(
      storage.db.transaction().execute(async (tx) => {
        await insertProject.execute(tx, { id: 'proj_c', name: 'gamma' })
        assert.ok(await projectByName.executeTakeFirst(tx, { name: 'gamma' }))
        throw new Error('roll back')
      }),
      /roll back/,
    )
    assert.equal(await projectByName.executeTakeFirst(storage.db, { name: 'gamma' }), undefined)
  })

  it("sees its transaction's uncommitted writes, its own and Kysely's, and a rollback undoes them", async () => {
    await insertProject.execute(storage.db, { id: 'proj_e', name: 'epsilon' })
    await assert.rejects(
      storage.db.transaction().execute(async (tx) => {
        assert.deepEqual(await renameProject.execute(tx, { id: 'proj_e', name: 'epsilon-2' }), [{ name: 'epsilon-2' }])
        const seenByKysely = await tx.selectFrom('projects').select('name').where('id', '=', 'proj_e').executeTakeFirst()
        assert.deepEqual(seenByKysely, { name: 'epsilon-2' })
        await tx.insertInto('projects').values({ id: 'proj_f', name: 'zeta', plan: 'free', created_at: 1 }).execute()
        assert.deepEqual(await projectByName.executeTakeFirst(tx, { name: 'zeta' }), { id: 'proj_f', plan: 'free' })
        throw new Error('roll back')
      }),
      /roll back/,
    )
    assert.deepEqual(await projectByName.executeTakeFirst(storage.db, { name: 'epsilon' }), { id: 'proj_e', plan: 'free' })
    assert.equal(await projectByName.executeTakeFirst(storage.db, { name: 'epsilon-2' }), undefined)
    assert.equal(await projectByName.executeTakeFirst(storage.db, { name: 'zeta' }), undefined)
  })

  it('refuses a transaction used after it ended', async () => {
    let finished!: Tx
    await storage.db.transaction().execute(async (tx) => {
      finished = tx
    })
    await assert.rejects(insertProject.execute(finished, { id: 'proj_late', name: 'late' }), /already committed/)
    assert.equal(await projectByName.executeTakeFirst(storage.db, { name: 'late' }), undefined)
  })

  it('does not see what an open transaction has not committed', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let inserted!: () => void
    const insertedInTx = new Promise<void>((resolve) => {
      inserted = resolve
    })
    const transaction = storage.db.transaction().execute(async (tx) => {
      await insertProject.execute(tx, { id: 'proj_d', name: 'delta' })
      inserted()
      await held
    })
    await insertedInTx
    if (dialect === 'sqlite') {
      // One connection: the read waits for the transaction, then sees what it committed.
      let answer: unknown = 'pending'
      const read = projectByName.executeTakeFirst(storage.db, { name: 'delta' }).then((row) => {
        answer = row
      })
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.equal(answer, 'pending')
      release()
      await read
      assert.deepEqual(answer, { id: 'proj_d', plan: 'free' })
    } else {
      // Another pooled connection: the read answers at once with the last committed state.
      assert.equal(await projectByName.executeTakeFirst(storage.db, { name: 'delta' }), undefined)
      release()
    }
    await transaction
    assert.deepEqual(await projectByName.executeTakeFirst(storage.db, { name: 'delta' }), { id: 'proj_d', plan: 'free' })
  })

  if (dialect === 'sqlite') {
    it('on SQLite runs at once on the free connection, outside Kysely’s executor; waits its turn through it otherwise', async () => {
      const executeQuery = mock.method(storage.db, 'executeQuery')
      try {
        assert.deepEqual(await projectByName.executeTakeFirst(storage.db, { name: 'delta' }), { id: 'proj_d', plan: 'free' })
        assert.equal(executeQuery.mock.callCount(), 0, 'the connection was free')
        await storage.db.transaction().execute(async (tx) => {
          const outside = projectByName.executeTakeFirst(storage.db, { name: 'delta' })
          await insertProject.execute(tx, { id: 'proj_direct', name: 'direct' })
          assert.equal(executeQuery.mock.callCount(), 1, 'the transaction holds the connection: the read waits for it')
          assert.deepEqual(await Promise.race([outside, new Promise((resolve) => setTimeout(() => resolve('waiting'), 20))]), 'waiting')
        })
      } finally {
        executeQuery.mock.restore()
      }
    })
  }

  if (dialect === 'sqlite') {
    it('closing a storage that ran hot queries alone closes the database (Kysely never used its driver)', async () => {
      const own = openStorage(database.url)
      assert.deepEqual(await projectByName.executeTakeFirst(own.db, { name: 'direct' }), { id: 'proj_direct', plan: 'free' })
      await own.close()
      await assert.rejects(projectByName.executeTakeFirst(own.db, { name: 'direct' }), /not open/)
    })
  }

  // On SQLite a statement is prepared once by the connection's cache, which keeps no count to read.
  if (dialect === 'postgres') {
    it('is prepared once per connection on PostgreSQL, inside a transaction and outside one', async () => {
      // Statements prepared on this connection by that hot query, and how many times each ran.
      const preparedByName = sql<{ count: number; executions: number }>`
        select count(*)::int as count, coalesce(sum(generic_plans + custom_plans), 0)::int as executions
        from pg_prepared_statements where name like 'hot-query-%' and statement like '%where "name" = $1'`
      await storage.db.connection().execute(async (connection) => {
        const before = (await preparedByName.execute(connection)).rows[0]!
        await projectByName.execute(connection, { name: 'alpha-2' })
        await projectByName.execute(connection, { name: 'beta' })
        assert.deepEqual((await preparedByName.execute(connection)).rows, [{ count: 1, executions: before.executions + 2 }])
      })
      await storage.db.transaction().execute(async (tx) => {
        const before = (await preparedByName.execute(tx)).rows[0]!
        await projectByName.execute(tx, { name: 'beta' })
        const after = (await preparedByName.execute(tx)).rows[0]!
        assert.deepEqual(after, { count: 1, executions: before.executions + 1 })
      })
    })
  }

  it('refuses a builder that does not pass a parameter through as a value', async () => {
    const inspecting = new HotQuery((db, p: { limit: number }) =>
      db
        .selectFrom('projects')
        .select('id')
        .limit(p.limit > 10 ? 10 : 5),
    )
    await assert.rejects(inspecting.execute(storage.db, { limit: 3 }), /parameters limit are not passed through/)
  })
  it('refuses a query that reads or returns columns as *, whose result a migration would change, and counts rows', async () => {
    const refused = [
      new HotQuery((db, p: { id: string }) => db.selectFrom('projects').selectAll().where('id', '=', p.id)),
      new HotQuery((db, p: { id: string }) => db.selectFrom('projects').select('id').selectAll().where('id', '=', p.id)),
      new HotQuery((db, p: { id: string }) => db.selectFrom('projects').distinct().selectAll().where('id', '=', p.id)),
      new HotQuery((_db, p: { id: string }) => sql`update projects set name = name where id = ${p.id} returning 1 as n, projects.*`),
      new HotQuery((_db, p: { ids: string[] }) => sql`select * from unnest(${p.ids}::text[]) as ids(id)`),
    ]
    for (const query of refused) await assert.rejects(query.execute(storage.db, { id: 'proj_b', ids: ['proj_b'] }), /never \*/)
    const counting = new HotQuery(
      (_db, p: { plan: string }) => sql<{ n: number }>`select count(*) as n from projects where plan = ${p.plan}`,
    )
    const kysely = await storage.db
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('plan', '=', 'free')
      .executeTakeFirstOrThrow()
    assert.ok(Number(kysely.n) > 0)
    assert.equal(Number((await counting.execute(storage.db, { plan: 'free' }))[0]?.n), Number(kysely.n))
  })

  it("shows each call to the database's plugins, built without them, and refuses a plugin that would rewrite it", async () => {
    const seen: string[] = []
    const watching: KyselyPlugin = {
      transformQuery: ({ node }) => {
        seen.push(node.kind)
        return node
      },
      transformResult: async ({ result }) => result,
    }
    // A fresh query, first run through the plugin: its template is still built without it.
    const byId = new HotQuery((db, p: { id: string }) => db.selectFrom('projects').select('name').where('id', '=', p.id))
    assert.deepEqual(await byId.execute(storage.db.withPlugin(watching), { id: 'proj_b' }), [{ name: 'beta' }])
    assert.deepEqual(await byId.execute(storage.db.withPlugin(watching), { id: 'proj_b' }), [{ name: 'beta' }])
    assert.deepEqual(seen, ['SelectQueryNode', 'SelectQueryNode'], 'seen once a call, not again when the template was built')

    const failing: KyselyPlugin = {
      transformQuery: () => {
        throw new Error('timeout exceeded when trying to connect')
      },
      transformResult: async ({ result }) => result,
    }
    await assert.rejects(byId.execute(storage.db.withPlugin(failing), { id: 'proj_b' }), /timeout exceeded/)
    await assert.rejects(byId.execute(storage.db.withPlugin(new CamelCasePlugin()), { id: 'proj_b' }), /may see it, not rewrite it/)
  })
})
