// The top of the signing page: who asks (logo, name, verified website), for what, and on which network. Every value
// is inserted as text, and the project's name is isolated (<bdi>).
import type { PayloadType } from '../../features/payloads/model.js'
import { type Child, h, isolated } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import { networkName } from './format.js'

const ACTIONS: Record<PayloadType, string> = {
  connect: 'connect your wallet',
  sign: 'sign a transaction',
  signAndSubmit: 'sign and submit a transaction',
  signMessage: 'sign a message',
}

/** The top of the page: who asks (logo, name, verified website), for what, and on which network. */
export function renderAsker(request: SignRequest): HTMLElement {
  const { project } = request
  const logo = project.logoUrl === undefined ? null : sameOriginPath(project.logoUrl)
  return h(
    'header',
    { className: 'asker' },
    h(
      'div',
      { className: 'who' },
      logo !== null && h('img', { className: 'logo', testId: 'project-logo', attrs: { src: logo, alt: '', width: '48', height: '48' } }),
      h(
        'div',
        {},
        h(
          'h1',
          {},
          isolated(project.name, { className: 'project-name', testId: 'project-name' }),
          // Once the request is settled the page tells of the past.
          ` ${request.status === 'pending' ? 'asks' : 'asked'} you to ${ACTIONS[request.type]}`,
        ),
        project.website !== undefined &&
          h(
            'p',
            { className: 'origin', testId: 'project-website' },
            h('span', { className: 'origin-host' }, ...hostLines(hostOf(project.website))),
            h('span', { className: 'verified' }, 'verified website'),
          ),
      ),
    ),
    networkLine(request.network),
  )
}

function networkLine(network: string): HTMLElement {
  const mainnet = network === 'mainnet'
  return h(
    'p',
    { className: mainnet ? 'network' : 'network network-test', testId: 'network' },
    networkName(network),
    !mainnet && h('span', { className: 'badge badge-warning' }, 'Not mainnet: test funds only'),
  )
}

/** The host a person checks (shop.example), with the scheme only when it is not https. */
function hostOf(origin: string): string {
  try {
    const url = new URL(origin)
    return url.protocol === 'https:' ? url.host : `${url.protocol}//${url.host}`
  } catch {
    return origin
  }
}

/**
 * A host that may break across lines after its dots only (each label kept whole, the dot at its end): broken at a
 * hyphen, a-very-long-name.example read as two names, the first of which a look-alike could claim. A label longer
 * than a phone's line may still wrap, rather than push the page sideways.
 */
function hostLines(host: string): Child[] {
  const labels = host.split('.')
  return labels.flatMap((label, index) => {
    const text = index === labels.length - 1 ? label : `${label}.`
    const part = h('span', { className: label.length <= MAX_UNBROKEN_LABEL ? 'host-label' : undefined }, text)
    return index === labels.length - 1 ? [part] : [part, h('wbr', {})]
  })
}

/** Characters of a host label kept on one line: about what a phone's line holds at the header's size. */
const MAX_UNBROKEN_LABEL = 30

/** The service serves logos itself: only a path on this origin is ever loaded. */
function sameOriginPath(path: string): string | null {
  return /^\/logos\/[^/?#]+\/[0-9a-f]{64}$/.test(path) ? path : null
}
