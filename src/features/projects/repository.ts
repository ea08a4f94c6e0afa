// Projects: the unit that owns payloads, keys and webhooks, and carries a plan.
import type { Selectable } from 'kysely'
import type { DbOrTx } from '../../platform/db/database.js'
import type { ProjectsTable } from '../../platform/db/schema.js'
import type { PlanName } from './plans.js'

export interface Project {
  id: string
  accountId: string | null
  name: string
  plan: PlanName
  createdAtMs: number
}

const toProject = (row: Selectable<ProjectsTable>): Project => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  plan: row.plan as PlanName,
  createdAtMs: row.created_at,
})

export const projectsRepository = {
  async insert(db: DbOrTx, project: Project): Promise<void> {
    await db
      .insertInto('projects')
      .values({ id: project.id, account_id: project.accountId, name: project.name, plan: project.plan, created_at: project.createdAtMs })
      .execute()
  },

  async findById(db: DbOrTx, id: string): Promise<Project | undefined> {
    const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toProject(row)
  },

  async listByAccount(db: DbOrTx, accountId: string): Promise<Project[]> {
    const rows = await db.selectFrom('projects').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'asc').execute()
    return rows.map(toProject)
  },

  /** Returns false when no project has that id. */
  async setPlan(db: DbOrTx, id: string, plan: PlanName): Promise<boolean> {
    const result = await db.updateTable('projects').set({ plan }).where('id', '=', id).executeTakeFirst()
    return result.numUpdatedRows > 0n
  },
}
