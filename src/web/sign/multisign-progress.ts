// A multisigned request on the signing page: how much of the quorum is signed, who has answered, and which signer
// a rejection is for. Every value is inserted as text.
import type { MultisignView } from '../../features/signing/multisign/view.js'
import { grouped } from '../shared/copy.js'
import { h } from '../shared/dom.js'

export class MultisignProgress {
  readonly element = h('section', { className: 'multisign', testId: 'multisign', attrs: { 'aria-label': 'Signatures' } })
  /** The signer a rejection is sent for: each signer of a multisigned request rejects for themself. */
  readonly rejectAs = h('select', { testId: 'reject-as', attrs: { id: 'reject-as' } })
  /** The choice of that signer, labelled, beside the Reject button. */
  readonly rejectAsField = h('label', { className: 'reject-as', attrs: { for: 'reject-as' } }, 'Reject as ', this.rejectAs)

  constructor(view: MultisignView) {
    this.update(view)
  }

  update(view: MultisignView): void {
    const answered = (signer: MultisignView['signers'][number]) =>
      signer.signed ? 'signed' : signer.rejectedAt !== null ? 'rejected' : 'waiting'
    this.element.replaceChildren(
      h('h2', {}, 'Signatures'),
      h(
        'p',
        { className: 'multisign-weight', testId: 'multisign-weight' },
        `${view.weight} of ${view.quorum} signed`,
        h('progress', { attrs: { max: String(view.quorum), value: String(Math.min(view.weight, view.quorum)), 'aria-hidden': 'true' } }),
      ),
      h(
        'p',
        { className: 'hint', testId: 'multisign-rule' },
        'Each signer answers for themself. A rejection is one signer’s: the request ends once those left can no longer reach the quorum.',
      ),
      h(
        'ul',
        { className: 'multisign-signers' },
        ...view.signers.map((signer) =>
          h(
            'li',
            { className: `signer signer-${answered(signer)}`, attrs: { 'data-account': signer.account } },
            grouped(signer.account, { className: 'address' }),
            h('span', { className: 'signer-weight' }, `weight ${signer.weight}`),
            h('span', { className: 'signer-state' }, answered(signer)),
          ),
        ),
      ),
    )
    const selected = this.rejectAs.value
    const waiting = view.signers.filter((signer) => answered(signer) === 'waiting')
    this.rejectAs.replaceChildren(...waiting.map((signer) => h('option', { attrs: { value: signer.account } }, signer.account)))
    if (waiting.some((signer) => signer.account === selected)) this.rejectAs.value = selected
    this.rejectAs.disabled = waiting.length === 0
  }
}
