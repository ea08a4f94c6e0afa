// GET /api/v1/sign/{uuid}: what the signing page shows. A read: it changes nothing (beyond the expiry every read of a
// payload applies); Xaman outcomes are learned by a background worker (xaman/outcome-worker.ts).
import { logoPath } from '../projects/project-branding.js'
import { projectsRepository } from '../projects/repository.js'
import type { SigningDeps } from './deps.js'
import { type SignView, type SignViewContext, toSignView } from './view.js'

export async function readSignRequest(deps: SigningDeps, uuid: string): Promise<SignView> {
  const payload = await deps.payloads.getForSigning(uuid)
  const [project, logoHash] = await Promise.all([
    projectsRepository.findById(deps.db, payload.projectId),
    projectsRepository.findLogoHash(deps.db, payload.projectId),
  ])
  const shown: SignViewContext['project'] = { name: project?.displayName ?? project?.name ?? '' }
  // An unverified website is never shown: anyone can type any address into a dashboard.
  if (project?.website && project.website.verifiedAtMs !== null) shown.website = project.website.url
  if (logoHash !== undefined) shown.logoUrl = logoPath(payload.projectId, logoHash)
  return toSignView(payload, {
    project: shown,
    network: deps.network,
    xamanEnabled: deps.xaman !== undefined,
    explorerTemplate: deps.explorerTemplate,
  })
}
