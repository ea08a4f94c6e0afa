// What the request asks for, in human terms: every value is inserted as text, so hostile content stays inert, and
// text from the application is isolated (<bdi>), with a warning where it hides or reorders characters. The top of the
// page is asker-view.ts; a transaction's fields are transaction-view.ts.
import { type Child, h, isolated } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import { deceptionWarning } from './deception-warning.js'
import { renderTransaction } from './transaction-view.js'

/** The body of the request: the transaction, message or challenge, and the app's own note. */
export function renderRequest(request: SignRequest): HTMLElement {
  return h(
    'section',
    { className: 'request', attrs: { 'aria-label': 'What is asked' } },
    request.customInstructions !== undefined &&
      h(
        'aside',
        { className: 'instructions' },
        h('h2', {}, 'Note from ', isolated(request.project.name)),
        h('p', {}, isolated(request.customInstructions, { testId: 'custom-instructions' })),
        deceptionWarning(request.customInstructions, 'note', 'custom-instructions-warning'),
        h('p', { className: 'hint' }, 'Written by the app; Countersign does not check it.'),
      ),
    request.signers !== undefined &&
      h(
        'p',
        { className: 'signers', testId: 'signers' },
        request.signers.length === 1 ? 'Sign with this account: ' : 'Sign with one of these accounts: ',
        h('code', {}, request.signers.join(', ')),
        '. Another account is refused.',
      ),
    ...renderAsked(request),
  )
}

/** Lines of the message box before it scrolls (20 rem at its line height), and characters a phone fits on a line. */
const BOX_LINES = 13
const PHONE_LINE_CHARS = 36

/** Whether a message may not fit its box on a phone, so that its end is out of sight until scrolled to. */
function mayOverflow(message: string): boolean {
  const lines = message.split('\n').reduce((sum, line) => sum + Math.max(1, Math.ceil([...line].length / PHONE_LINE_CHARS)), 0)
  return lines > BOX_LINES
}

function renderAsked(request: SignRequest): Child[] {
  switch (request.type) {
    case 'connect':
      return [
        h('p', { className: 'lead' }, isolated(request.project.name), ' will learn your XRP Ledger address.'),
        h('p', {}, 'Your wallet signs this text to prove the address is yours. Nothing is sent to the ledger.'),
        // Shown whole: a few short lines, which the person should read before signing.
        h('pre', { className: 'signed-text whole', testId: 'challenge' }, request.challenge ?? ''),
      ]
    case 'signMessage':
      return [
        h('h2', {}, 'Message to sign'),
        mayOverflow(request.message ?? '') &&
          h(
            'p',
            { className: 'hint', testId: 'message-length' },
            `This message is long (${[...(request.message ?? '')].length.toLocaleString('en-US')} characters): scroll inside its box to read it all before you approve.`,
          ),
        // A long message scrolls inside its box; the box takes keyboard focus, so it scrolls without a mouse too.
        h(
          'pre',
          { className: 'signed-text', attrs: { tabindex: '0', 'aria-label': 'Message to sign' } },
          isolated(request.message ?? '', { testId: 'message' }),
        ),
        deceptionWarning(request.message ?? '', 'message', 'message-warning'),
      ]
    case 'sign':
    case 'signAndSubmit':
      return [
        renderTransaction(request),
        request.status === 'pending' &&
          (request.type === 'signAndSubmit'
            ? h('p', { className: 'hint' }, 'Once you approve, Countersign submits the signed transaction to the XRP Ledger.')
            : h(
                'p',
                { className: 'hint' },
                'Once you approve, the signed transaction goes to ',
                isolated(request.project.name),
                ', which may submit it to the XRP Ledger.',
              )),
      ]
  }
}
