// GET /api/v1/sign/{uuid}: what the signing page shows. A read: it changes nothing (beyond the expiry every read of a
// payload applies); Xaman outcomes are learned by a background worker (xaman/outcome-worker.ts).
import { projectsRepository } from '../projects/repository.js'
import type { SigningDeps } from './deps.js'
import { type SignView, toSignView } from './view.js'

export async function readSignRequest(deps: SigningDeps, uuid: string): Promise<SignView> {
  const payload = await deps.payloads.getForSigning(uuid)
  const project = await projectsRepository.findById(deps.db, payload.projectId)
  return toSignView(payload, { projectName: project?.name ?? '', network: deps.network, xamanEnabled: deps.xaman !== undefined })
}
