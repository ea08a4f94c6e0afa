// Projects and their API keys: creation (a new project comes with its first key), keys, plans.

import type { ServiceEvents } from '../../events.js'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/crypto/ids.js'
import type { Db, DbOrTx, Tx } from '../../platform/db/database.js'
import { generateApiKey } from './api-keys.js'
import { type ApiKeyRecord, apiKeysRepository } from './api-keys-repository.js'
import type { PlanName } from './plans.js'
import { type Project, type ProjectLogo, projectsRepository } from './repository.js'

export interface CreatedApiKey extends ApiKeyRecord {
  /** The full key: returned once, never stored. */
  apiKey: string
}

export class ProjectService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** 'project.planChanged' in the transaction of a plan's change. */
    private readonly events: ServiceEvents,
  ) {}

  /** `first` runs in the creation's transaction before anything is written: a cap's check, which may refuse. */
  async createProject(
    input: {
      name: string
      plan?: PlanName
      accountId?: string | null
    },
    first?: (tx: Tx) => Promise<void>,
  ): Promise<{ project: Project; key: CreatedApiKey }> {
    const project: Project = {
      id: newId('proj'),
      accountId: input.accountId ?? null,
      name: input.name,
      plan: input.plan ?? 'free',
      createdAtMs: this.clock.now(),
      displayName: null,
      website: null,
    }
    const key = await this.db.transaction().execute(async (tx) => {
      await first?.(tx)
      await projectsRepository.insert(tx, project)
      return this.insertKey(tx, project.id, 'Default')
    })
    return { project, key }
  }

  /** `first` as for createProject. */
  async createApiKey(projectId: string, name: string, first?: (tx: Tx) => Promise<void>): Promise<CreatedApiKey> {
    if (first === undefined) return this.insertKey(this.db, projectId, name)
    return this.db.transaction().execute(async (tx) => {
      await first(tx)
      return this.insertKey(tx, projectId, name)
    })
  }

  /** Returns false when no project has that id. */
  setPlan(projectId: string, plan: PlanName): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      if (!(await projectsRepository.setPlan(tx, projectId, plan))) return false
      await this.events.emitInTransaction(tx, 'project.planChanged', { projectId, plan })
      return true
    })
  }

  /** A project's logo for its public URL: only the current one (the hash in the URL must match). */
  async publicLogo(projectId: string, sha256: string): Promise<ProjectLogo | undefined> {
    const logo = await projectsRepository.findLogo(this.db, projectId)
    return logo?.sha256 === sha256 ? logo : undefined
  }

  private async insertKey(db: DbOrTx, projectId: string, name: string): Promise<CreatedApiKey> {
    const generated = generateApiKey()
    const record: ApiKeyRecord = {
      id: newId('key'),
      projectId,
      name,
      prefix: generated.prefix,
      createdAtMs: this.clock.now(),
      lastUsedAtMs: null,
      revokedAtMs: null,
    }
    await apiKeysRepository.insert(db, { ...record, keyHash: generated.hash })
    return { ...record, apiKey: generated.key }
  }
}
