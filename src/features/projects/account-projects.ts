// Projects as a signed-in account sees them (the dashboard's session endpoints): only its own projects, their
// keys, usage, analytics and payloads. Another account's project is reported as not found, never as forbidden,
// so that project ids cannot be probed.

import type { Clock } from '../../platform/clock.js'
import { utcMonth } from '../../platform/clock.js'
import { isUuid } from '../../platform/crypto/ids.js'
import type { Db } from '../../platform/db/database.js'
import { notFound, unprocessable } from '../../platform/errors.js'
import type { Payload, PayloadStatus, PayloadType } from '../payloads/model.js'
import { NOT_FOUND_MESSAGE as PAYLOAD_NOT_FOUND, type PayloadService } from '../payloads/service.js'
import { type Analytics, type AnalyticsPeriod, periodDays, summarizeAnalytics } from './analytics.js'
import { analyticsRepository } from './analytics-repository.js'
import type { ApiKeyAuthenticator } from './api-key-authenticator.js'
import { type ApiKeyRecord, apiKeysRepository } from './api-keys-repository.js'
import { normalizeName } from './names.js'
import type { PlanLimits, PlanName } from './plans.js'
import { type Project, projectsRepository } from './repository.js'
import type { CreatedApiKey, ProjectService } from './service.js'
import { usageRepository } from './usage-repository.js'

export const PROJECT_NOT_FOUND = 'Project not found'
export const API_KEY_NOT_FOUND = 'API key not found'

export interface ProjectOverview {
  project: Project
  usage: { month: string; used: number; limit: number }
  limits: PlanLimits
}

export interface AccountProjectsOptions {
  db: Db
  clock: Clock
  projects: ProjectService
  payloads: PayloadService
  authenticator: ApiKeyAuthenticator
  limits: Record<PlanName, PlanLimits>
}

export class AccountProjects {
  constructor(private readonly options: AccountProjectsOptions) {}

  /** A new Free project owned by the account, with its first key. */
  async create(accountId: string, name: string): Promise<{ project: Project; key: CreatedApiKey }> {
    return this.options.projects.createProject({ name: validName('name', name), plan: 'free', accountId })
  }

  async list(accountId: string): Promise<Project[]> {
    return projectsRepository.listByAccount(this.options.db, accountId)
  }

  /** The account's own project; another account's is not found. */
  async project(accountId: string, projectId: string): Promise<Project> {
    return this.owned(accountId, projectId)
  }

  async overview(accountId: string, projectId: string): Promise<ProjectOverview> {
    const project = await this.owned(accountId, projectId)
    const limits = this.options.limits[project.plan]
    const month = utcMonth(this.options.clock.now())
    const used = await usageRepository.monthlyCount(this.options.db, project.id, month)
    return { project, usage: { month, used, limit: limits.monthlyPayloads }, limits }
  }

  async keys(accountId: string, projectId: string): Promise<ApiKeyRecord[]> {
    const project = await this.owned(accountId, projectId)
    return apiKeysRepository.listForProject(this.options.db, project.id)
  }

  async createKey(accountId: string, projectId: string, name: string): Promise<CreatedApiKey> {
    const project = await this.owned(accountId, projectId)
    return this.options.projects.createApiKey(project.id, validName('name', name))
  }

  /**
   * Revokes a key (a second revocation keeps the first time). This process forgets its cached keys at once;
   * other instances within the authenticator's cache lifetime (5 s).
   */
  async revokeKey(accountId: string, projectId: string, keyId: string): Promise<ApiKeyRecord> {
    const project = await this.owned(accountId, projectId)
    await apiKeysRepository.revoke(this.options.db, project.id, keyId, this.options.clock.now())
    const key = await apiKeysRepository.findForProject(this.options.db, project.id, keyId)
    if (!key) throw notFound(API_KEY_NOT_FOUND)
    this.options.authenticator.invalidate()
    return key
  }

  async analytics(accountId: string, projectId: string, period: AnalyticsPeriod): Promise<Analytics> {
    const project = await this.owned(accountId, projectId)
    const days = periodDays(period, this.options.clock.now())
    const rows = await analyticsRepository.dailyCounts(this.options.db, project.id, days[0] as string, days[days.length - 1] as string)
    return summarizeAnalytics(period, days, rows)
  }

  async payloads(
    accountId: string,
    projectId: string,
    page: { limit: number; offset: number; status?: PayloadStatus; type?: PayloadType },
  ): Promise<Payload[]> {
    const project = await this.owned(accountId, projectId)
    return this.options.payloads.list(project.id, page)
  }

  async payload(accountId: string, projectId: string, uuid: string): Promise<Payload> {
    const project = await this.owned(accountId, projectId)
    if (!isUuid(uuid)) throw notFound(PAYLOAD_NOT_FOUND)
    return this.options.payloads.getForProject(project.id, uuid)
  }

  private async owned(accountId: string, projectId: string): Promise<Project> {
    const project = await projectsRepository.findById(this.options.db, projectId)
    if (!project || project.accountId !== accountId) throw notFound(PROJECT_NOT_FOUND)
    return project
  }
}

function validName(field: string, value: string): string {
  const result = normalizeName(field, value)
  if ('error' in result) throw unprocessable([result.error])
  return result.name
}
