// How the dashboard's project endpoints show a project, its website, an API key and a payload with what was requested.
import { toIso } from '../../platform/utc.js'
import type { Payload } from '../payloads/model.js'
import { toPayloadView } from '../payloads/view.js'
import type { ApiKeyRecord } from './api-keys-repository.js'
import { WEBSITE_PROOF_PATH, websiteProofLine } from './project-branding.js'
import type { Project } from './repository.js'
import type { ApiKeySummary, PayloadDetail, ProjectSummary, ProjectWebsite } from './schemas.js'

export const toProjectSummary = (project: Project): ProjectSummary => ({
  id: project.id,
  name: project.name,
  displayName: project.displayName,
  plan: project.plan,
  createdAt: toIso(project.createdAtMs),
})

export const toWebsite = (project: Project): ProjectWebsite =>
  project.website === null
    ? null
    : {
        url: project.website.url,
        verified: project.website.verifiedAtMs !== null,
        verifiedAt: project.website.verifiedAtMs === null ? null : toIso(project.website.verifiedAtMs),
        proofUrl: `${project.website.url}${WEBSITE_PROOF_PATH}`,
        proofLine: websiteProofLine(project.website.token),
      }

export const toKeySummary = (key: ApiKeyRecord): ApiKeySummary => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: toIso(key.createdAtMs),
  lastUsedAt: key.lastUsedAtMs === null ? null : toIso(key.lastUsedAtMs),
  revokedAt: key.revokedAtMs === null ? null : toIso(key.revokedAtMs),
})

export const toPayloadDetail = (payload: Payload): PayloadDetail => ({
  ...toPayloadView(payload),
  transaction: payload.transaction,
  message: payload.message,
  customInstructions: payload.customInstructions,
  returnUrl: payload.returnUrl,
})
