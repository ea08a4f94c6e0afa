// The signing page's choice of a wallet: the wallets that can answer the request, each checked for availability, the
// one chosen, and its own controls (seed field, QR code) in the panel under the list.
import { h } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import { messageOf } from './problems.js'
import { walletsFor } from './wallets/index.js'
import type { Availability, WalletAdapter } from './wallets/types.js'

/** Narrower than this, the page is on a phone: desktop-only wallets fold away and the actions stay in reach. */
const PHONE_QUERY = '(max-width: 47.99rem)'

export interface WalletChoice {
  adapter: WalletAdapter
  availability: Availability | undefined
  item: HTMLButtonElement
  note: HTMLElement
}

export interface WalletPickerOptions {
  /** The request as the page now knows it, for the chosen wallet's panel. */
  currentRequest(): SignRequest
  /** A wallet was chosen (its panel is shown). */
  onChosen(): void
  /** A wallet's availability is known. */
  onChecked(): void
}

export class WalletPicker {
  readonly panel = h('div', { className: 'wallet-panel', testId: 'wallet-panel' })
  private readonly choices: WalletChoice[]
  private chosenChoice: WalletChoice | undefined
  private disabled = false

  constructor(
    request: SignRequest,
    private readonly options: WalletPickerOptions,
  ) {
    this.choices = walletsFor(request).map((adapter) => {
      const note = h('span', { className: 'wallet-note' }, 'Checking…')
      const item = h('button', {
        className: 'wallet checking',
        testId: `wallet-${adapter.id}`,
        attrs: { type: 'button', 'aria-pressed': 'false' },
      })
      item.append(h('span', { className: 'wallet-label' }, adapter.label), note)
      const choice: WalletChoice = { adapter, availability: undefined, item, note }
      item.addEventListener('click', () => this.choose(choice))
      return choice
    })
  }

  get chosen(): WalletChoice | undefined {
    return this.chosenChoice
  }

  /** The "Approve with" section: the wallets, those for a computer folded on a phone, and the chosen one's panel. */
  render(): HTMLElement {
    // On a phone, browser extensions and WebHID cannot work: those wallets fold away under "Other wallets", so that
    // the ones that can come first and the actions stay close. On a wider screen the fold stays open, its summary hidden.
    let first = this.choices.filter((choice) => !choice.adapter.desktopOnly)
    let others = this.choices.filter((choice) => choice.adapter.desktopOnly)
    // No wallet here works in a phone's browser (mainnet without Xaman): a phone is told to use a computer instead.
    const computerOnly = first.length === 0 && others.length > 0
    if (first.length === 0) [first, others] = [others, []]
    const otherWallets =
      others.length > 0
        ? h(
            'details',
            { className: 'other-wallets', testId: 'other-wallets' },
            h('summary', {}, 'Other wallets (on a computer)'),
            h('div', { className: 'wallet-list' }, ...others.map((choice) => choice.item)),
          )
        : null
    if (otherWallets !== null) {
      const phone = window.matchMedia(PHONE_QUERY)
      otherWallets.open = !phone.matches
      phone.addEventListener('change', () => {
        otherWallets.open = !phone.matches
      })
    }
    return h(
      'section',
      { className: 'wallets', attrs: { 'aria-labelledby': 'wallets-heading' } },
      h('h2', { attrs: { id: 'wallets-heading' } }, 'Approve with'),
      computerOnly &&
        h(
          'p',
          { className: 'warning phone-only', testId: 'computer-only' },
          'These wallets work in a browser on a computer, not on a phone: open this page on a computer to approve.',
        ),
      this.choices.length > 0
        ? h('div', { className: 'wallet-list' }, ...first.map((choice) => choice.item))
        : h('p', { className: 'warning' }, 'No wallet this page knows can answer this kind of request.'),
      otherWallets,
      this.panel,
    )
  }

  /** Asks every wallet whether it can be used here; each answer shows as it comes. */
  detectAll(): void {
    for (const choice of this.choices) void this.detect(choice)
  }

  /** While an answer is on its way, no other wallet can be chosen. */
  setDisabled(disabled: boolean): void {
    this.disabled = disabled
    for (const choice of this.choices) choice.item.disabled = disabled
  }

  private async detect(choice: WalletChoice): Promise<void> {
    try {
      choice.availability = await choice.adapter.detect()
    } catch (error) {
      choice.availability = { available: false, reason: `${choice.adapter.label} could not be checked: ${messageOf(error)}` }
    }
    const { available, reason, note } = choice.availability
    choice.note.replaceChildren(available ? (note ?? 'Ready') : (reason ?? 'Not available'))
    choice.item.classList.remove('checking')
    choice.item.classList.toggle('unavailable', !available)
    if (choice === this.chosenChoice) this.showChoice()
    this.options.onChecked()
  }

  private choose(choice: WalletChoice): void {
    if (this.disabled || choice === this.chosenChoice) return
    this.chosenChoice = choice
    for (const other of this.choices) other.item.setAttribute('aria-pressed', String(other === choice))
    this.showChoice()
    this.options.onChosen()
  }

  private showChoice(): void {
    const choice = this.chosenChoice
    if (choice === undefined) return
    if (choice.availability?.available === false) {
      this.panel.replaceChildren(
        h('p', { className: 'warning', testId: 'wallet-unavailable' }, choice.availability.reason ?? 'Not available'),
      )
    } else if (choice.adapter.showPanel !== undefined) {
      choice.adapter.showPanel(this.panel, this.options.currentRequest())
    } else {
      this.panel.replaceChildren()
    }
  }
}
