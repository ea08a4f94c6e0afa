// Projects as a signed-in account sees them (the dashboard's session endpoints): only its own projects, their
// keys, usage, analytics and payloads. Another account's project is reported as not found, never as forbidden,
// so that project ids cannot be probed.

import type { Clock } from '../../platform/clock.js'
import { isUuid } from '../../platform/crypto/ids.js'
import type { Db, Dialect } from '../../platform/db/database.js'
import { lockRow } from '../../platform/db/row-lock.js'
import { conflict, notFound, unprocessable } from '../../platform/errors.js'
import { consumePerMinute, type RateLimiter } from '../../platform/rate-limit/rate-limiter.js'
import { utcMonth } from '../../platform/utc.js'
import type { Payload } from '../payloads/model.js'
import type { PayloadPage } from '../payloads/schemas.js'
import { NOT_FOUND_MESSAGE as PAYLOAD_NOT_FOUND, type PayloadService } from '../payloads/service.js'
import { fetchPublicText } from '../webhooks/fetch-public-text.js'
import { type AnalyticsPeriod, periodDays, summarizeAnalytics } from './analytics.js'
import { analyticsRepository } from './analytics-repository.js'
import type { ApiKeyAuthenticator } from './api-key-authenticator.js'
import { type ApiKeyRecord, apiKeysRepository } from './api-keys-repository.js'
import { normalizeName } from './names.js'
import type { PlanLimits, PlanName } from './plans.js'
import { newWebsiteToken, normalizeWebsite, parseLogo, proofMatches, WEBSITE_PROOF_PATH } from './project-branding.js'
import { type Project, projectsRepository } from './repository.js'
import type { Analytics } from './schemas.js'
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
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: a website may then be http and on a private address (local development, tests). */
  allowPrivateTargets: boolean
  dialect: Dialect
  /** PROJECTS_PER_ACCOUNT: the most projects an account may have (those the command line made for it count too). */
  projectsPerAccount: number
  /** Counts each project's website checks (WEBSITE_CHECKS_PER_MINUTE), across instances with Redis. */
  rateLimiter: RateLimiter
}

/**
 * Active keys a project may have at once: enough for every service and environment of an application and a rotation
 * of each, and a bound on what a session can create.
 */
export const MAX_ACTIVE_KEYS_PER_PROJECT = 20

/** Revoked keys a project keeps listed (with when they were last used); older ones are deleted. */
export const KEPT_REVOKED_KEYS = 50

/** What PATCH /projects/{id} changes; an absent field is left alone, null clears. */
export interface ProjectSettingsChange {
  displayName?: string | null
  websiteUrl?: string | null
}

/** The result of checking a website's proof. */
export interface WebsiteCheck {
  verified: boolean
  /** Why not, in words for the project's owner (never shown to end users). */
  problem?: string
}

/** A website's proof file is a few lines of text. */
const MAX_PROOF_BYTES = 4096
const WEBSITE_CHECK_TIMEOUT_MS = 5000

/**
 * A check is an outbound request to a host the account chose, held up to 5 seconds: unbounded, one signed-in script
 * would have the service send any number of them at once (its sockets shared by every tenant), from its own address.
 * A person checking after each change to the proof file needs a few a minute.
 */
export const WEBSITE_CHECKS_PER_MINUTE = 6

export class AccountProjects {
  constructor(private readonly options: AccountProjectsOptions) {}

  /** A new Free project owned by the account, with its first key. */
  async create(accountId: string, name: string): Promise<{ project: Project; key: CreatedApiKey }> {
    const { dialect, projectsPerAccount } = this.options
    // Each Free project brings its own month of payloads: without a bound, one sign-in would bring any number of them.
    return this.options.projects.createProject({ name: validName('name', name), plan: 'free', accountId }, async (tx) => {
      await lockRow(tx, dialect, 'accounts', accountId)
      if ((await projectsRepository.countByAccount(tx, accountId)) >= projectsPerAccount) {
        throw conflict(`An account can have at most ${projectsPerAccount} projects; ask the service's operator for more`)
      }
    })
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
    return this.options.projects.createApiKey(project.id, validName('name', name), async (tx) => {
      await lockRow(tx, this.options.dialect, 'projects', project.id)
      if ((await apiKeysRepository.countActiveForProject(tx, project.id)) >= MAX_ACTIVE_KEYS_PER_PROJECT) {
        throw conflict(`A project can have at most ${MAX_ACTIVE_KEYS_PER_PROJECT} active keys; revoke one before adding another`)
      }
    })
  }

  /**
   * Revokes a key (a second revocation keeps the first time, and changes nothing). This process forgets that key at
   * once; other instances within the authenticator's cache lifetime (5 s). The project keeps its KEPT_REVOKED_KEYS
   * revoked last: a loop of creations and revocations had grown its key list without end, and one read of it
   * (300,000 keys, 52 MB) held the process for 10 s.
   */
  async revokeKey(accountId: string, projectId: string, keyId: string): Promise<ApiKeyRecord> {
    const project = await this.owned(accountId, projectId)
    const { key, revokedHash } = await this.options.db.transaction().execute(async (tx) => {
      const revokedHash = await apiKeysRepository.revoke(tx, project.id, keyId, this.options.clock.now())
      if (revokedHash !== undefined) await apiKeysRepository.pruneRevoked(tx, project.id, keyId, KEPT_REVOKED_KEYS)
      return { key: await apiKeysRepository.findForProject(tx, project.id, keyId), revokedHash }
    })
    if (!key) throw notFound(API_KEY_NOT_FOUND)
    if (revokedHash !== undefined) this.options.authenticator.forget(revokedHash)
    return key
  }

  async analytics(accountId: string, projectId: string, period: AnalyticsPeriod): Promise<Analytics> {
    const project = await this.owned(accountId, projectId)
    const days = periodDays(period, this.options.clock.now())
    const rows = await analyticsRepository.dailyCounts(this.options.db, project.id, days[0] as string, days[days.length - 1] as string)
    return summarizeAnalytics(period, days, rows)
  }

  async payloads(accountId: string, projectId: string, page: PayloadPage): Promise<Payload[]> {
    const project = await this.owned(accountId, projectId)
    return this.options.payloads.list(project.id, page)
  }

  async payload(accountId: string, projectId: string, uuid: string): Promise<Payload> {
    const project = await this.owned(accountId, projectId)
    if (!isUuid(uuid)) throw notFound(PAYLOAD_NOT_FOUND)
    return this.options.payloads.getForProject(project.id, uuid)
  }

  /** Changes the display name and the website; a new website starts unverified, with a new proof token. */
  async updateSettings(accountId: string, projectId: string, change: ProjectSettingsChange): Promise<Project> {
    const project = await this.owned(accountId, projectId)
    const errors = []
    let displayName: string | null | undefined
    if (change.displayName !== undefined) {
      if (change.displayName === null || change.displayName.trim() === '') displayName = null
      else {
        const result = normalizeName('displayName', change.displayName)
        if ('error' in result) errors.push(result.error)
        else displayName = result.name
      }
    }
    let website: { url: string; token: string } | null | undefined
    if (change.websiteUrl !== undefined) {
      if (change.websiteUrl === null || change.websiteUrl.trim() === '') website = null
      else {
        const result = normalizeWebsite(change.websiteUrl, this.options.allowPrivateTargets)
        if ('error' in result) errors.push(result.error)
        // The same origin again keeps its token and its verification.
        else if (result.origin !== project.website?.url) website = { url: result.origin, token: newWebsiteToken() }
      }
    }
    if (errors.length > 0) throw unprocessable(errors)
    await this.options.db.transaction().execute(async (tx) => {
      if (displayName !== undefined) await projectsRepository.setDisplayName(tx, project.id, displayName)
      if (website !== undefined) await projectsRepository.setWebsite(tx, project.id, website)
    })
    return this.owned(accountId, projectId)
  }

  /**
   * Fetches the website's proof file (WEBSITE_PROOF_PATH) under the webhook rules (public addresses only, no
   * redirects, 5 seconds, 4 KB) and records the answer: verified when it holds the project's line, unverified
   * otherwise (a website that removed its proof loses the mark at the next check).
   */
  async verifyWebsite(accountId: string, projectId: string): Promise<{ project: Project; check: WebsiteCheck }> {
    const project = await this.owned(accountId, projectId)
    const website = project.website
    if (website === null) throw unprocessable([{ field: 'websiteUrl', message: 'is not set: set the website first' }])
    const count = { key: `website-check:${project.id}`, limit: WEBSITE_CHECKS_PER_MINUTE, what: 'website checks for this project' }
    await consumePerMinute(this.options.rateLimiter, count, () => this.options.clock.now())
    const proofUrl = `${website.url}${WEBSITE_PROOF_PATH}`
    const answer = await fetchPublicText(proofUrl, {
      timeoutMs: WEBSITE_CHECK_TIMEOUT_MS,
      maxBytes: MAX_PROOF_BYTES,
      allowPrivateTargets: this.options.allowPrivateTargets,
    })
    let check: WebsiteCheck
    if (!answer.ok) check = { verified: false, problem: `${proofUrl} could not be read: ${answer.error}` }
    else if (!proofMatches(answer.body, website.token))
      check = { verified: false, problem: `${proofUrl} does not hold this project's line` }
    else check = { verified: true }
    await projectsRepository.setWebsiteVerifiedAt(
      this.options.db,
      project.id,
      website.url,
      check.verified ? this.options.clock.now() : null,
    )
    return { project: await this.owned(accountId, projectId), check }
  }

  /** Sets the logo from a data URL (parseLogo's rules). */
  async setLogo(accountId: string, projectId: string, dataUrl: string): Promise<string> {
    const project = await this.owned(accountId, projectId)
    const logo = parseLogo(dataUrl)
    if ('error' in logo) throw unprocessable([logo.error])
    await projectsRepository.putLogo(this.options.db, project.id, { ...logo, updatedAtMs: this.options.clock.now() })
    return logo.sha256
  }

  async deleteLogo(accountId: string, projectId: string): Promise<void> {
    const project = await this.owned(accountId, projectId)
    await projectsRepository.deleteLogo(this.options.db, project.id)
  }

  /** The hash of the project's logo, when it has one. */
  async logoHash(accountId: string, projectId: string): Promise<string | undefined> {
    const project = await this.owned(accountId, projectId)
    return projectsRepository.findLogoHash(this.options.db, project.id)
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
