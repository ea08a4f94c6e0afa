// Projects: the unit that owns payloads, keys and webhooks, and carries a plan; and what the signing page shows of
// them (display name, website, logo).
import type { Selectable } from 'kysely'
import type { DbOrTx } from '../../platform/db/database.js'
import type { ProjectLogosTable, ProjectsTable } from '../../platform/db/schema.js'
import type { PlanName } from './plans.js'

export interface ProjectWebsite {
  url: string
  /** The proof the website must publish to be verified. */
  token: string
  verifiedAtMs: number | null
}

export interface Project {
  id: string
  accountId: string | null
  name: string
  plan: PlanName
  createdAtMs: number
  displayName: string | null
  website: ProjectWebsite | null
}

export interface ProjectLogo {
  contentType: string
  bytes: Buffer
  sha256: string
  updatedAtMs: number
}

const toProject = (row: Selectable<ProjectsTable>): Project => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  plan: row.plan as PlanName,
  createdAtMs: Number(row.created_at),
  displayName: row.display_name ?? null,
  website:
    row.website_url === null || row.website_url === undefined
      ? null
      : {
          url: row.website_url,
          token: row.website_token ?? '',
          verifiedAtMs: row.website_verified_at === null || row.website_verified_at === undefined ? null : Number(row.website_verified_at),
        },
})

const toLogo = (row: Selectable<ProjectLogosTable>): ProjectLogo => ({
  contentType: row.content_type,
  bytes: Buffer.from(row.data, 'base64'),
  sha256: row.sha256,
  updatedAtMs: Number(row.updated_at),
})

export const projectsRepository = {
  async insert(db: DbOrTx, project: Project): Promise<void> {
    await db
      .insertInto('projects')
      .values({
        id: project.id,
        account_id: project.accountId,
        name: project.name,
        plan: project.plan,
        created_at: project.createdAtMs,
        display_name: project.displayName,
        website_url: project.website?.url ?? null,
        website_token: project.website?.token ?? null,
        website_verified_at: project.website?.verifiedAtMs ?? null,
      })
      .execute()
  },

  async findById(db: DbOrTx, id: string): Promise<Project | undefined> {
    const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toProject(row)
  },

  async countByAccount(db: DbOrTx, accountId: string): Promise<number> {
    const row = await db
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    return Number(row.count)
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

  async setDisplayName(db: DbOrTx, id: string, displayName: string | null): Promise<void> {
    await db.updateTable('projects').set({ display_name: displayName }).where('id', '=', id).execute()
  },

  /** A new website (or none) starts unverified, with its own proof token. */
  async setWebsite(db: DbOrTx, id: string, website: { url: string; token: string } | null): Promise<void> {
    await db
      .updateTable('projects')
      .set({ website_url: website?.url ?? null, website_token: website?.token ?? null, website_verified_at: null })
      .where('id', '=', id)
      .execute()
  },

  /**
   * Records a verification of `url` (or its loss, with null). Only while the project still has that website: a
   * check that finishes after the owner changed it must not verify the new one.
   */
  async setWebsiteVerifiedAt(db: DbOrTx, id: string, url: string, verifiedAtMs: number | null): Promise<void> {
    await db
      .updateTable('projects')
      .set({ website_verified_at: verifiedAtMs })
      .where('id', '=', id)
      .where('website_url', '=', url)
      .execute()
  },

  async findLogo(db: DbOrTx, projectId: string): Promise<ProjectLogo | undefined> {
    const row = await db.selectFrom('project_logos').selectAll().where('project_id', '=', projectId).executeTakeFirst()
    return row && toLogo(row)
  },

  /** The logo's hash alone (what a page needs to link it), without reading the image. */
  async findLogoHash(db: DbOrTx, projectId: string): Promise<string | undefined> {
    const row = await db.selectFrom('project_logos').select('sha256').where('project_id', '=', projectId).executeTakeFirst()
    return row?.sha256
  },

  async putLogo(db: DbOrTx, projectId: string, logo: ProjectLogo): Promise<void> {
    const values = {
      content_type: logo.contentType,
      data: logo.bytes.toString('base64'),
      sha256: logo.sha256,
      updated_at: logo.updatedAtMs,
    }
    await db
      .insertInto('project_logos')
      .values({ project_id: projectId, ...values })
      .onConflict((conflict) => conflict.column('project_id').doUpdateSet(values))
      .execute()
  },

  async deleteLogo(db: DbOrTx, projectId: string): Promise<void> {
    await db.deleteFrom('project_logos').where('project_id', '=', projectId).execute()
  },
}
