// Xaman, through the Xaman platform API on the server: the service creates the Xaman sign request, fetches the signed
// result server to server and verifies it like any other; the page only shows Xaman's QR code and link, then waits.

import { h } from '../../shared/dom.js'
import { WALLET_NAMES } from '../../shared/wallet-names.js'
import { type SignRequest, startXaman } from '../api.js'
import { httpUrl } from '../http-url.js'
import type { Approval, WalletAdapter } from './types.js'

export function createXamanAdapter(): WalletAdapter {
  let panelOfChoice: HTMLElement | undefined

  return {
    id: 'xaman',
    label: WALLET_NAMES.xaman,
    // Xaman signs transactions and its SignIn, not free-form messages.
    supports: (type) => type !== 'signMessage',
    detect: async () => ({ available: true }),

    showPanel(panel: HTMLElement) {
      panelOfChoice = panel
      panel.replaceChildren(
        h('p', { className: 'hint' }, 'Approve to get a QR code to scan with the Xaman app, or a link that opens Xaman on this phone.'),
      )
    },

    async approve(request: SignRequest): Promise<Approval> {
      const { qrUrl, deepLink } = await startXaman(request.uuid)
      const qr = httpUrl(qrUrl, location.href, { httpsOnly: true })
      const link = httpUrl(deepLink, location.href, { httpsOnly: true })
      if (qr === null || link === null) throw new Error('the service sent a Xaman link this page will not open')
      panelOfChoice?.replaceChildren(
        h('img', {
          className: 'xaman-qr',
          testId: 'xaman-qr',
          attrs: { src: qr, alt: 'QR code to scan with Xaman', width: '220', height: '220', referrerpolicy: 'no-referrer' },
        }),
        h(
          'p',
          {},
          h('a', { className: 'button-link', testId: 'xaman-link', attrs: { href: link, rel: 'noopener noreferrer' } }, 'Open in Xaman'),
        ),
        h(
          'p',
          { className: 'hint' },
          'Scan the code with Xaman, or open the link on the phone where Xaman is installed. This page updates once you sign.',
        ),
      )
      return { kind: 'awaitingService', waitingFor: 'Xaman' }
    },
  }
}
