// "Open on your phone": a QR code of this page's own address, for people who keep their wallet on their phone.
import { button, h } from '../shared/dom.js'

/** Shown on desktop-width screens only (sign.css); the QR library loads on first open. */
export function renderPhoneQr(pageUrl: string): HTMLElement {
  const canvas = h('canvas', { testId: 'qr', attrs: { 'aria-label': 'QR code of this page' } })
  const body = h(
    'div',
    { className: 'phone-qr-body', attrs: { hidden: '' } },
    canvas,
    h('p', { className: 'hint' }, 'Scan with your phone camera to open this page there.'),
  )
  let drawn = false
  const toggle = button(
    'Open on your phone',
    { className: 'link-button', testId: 'qr-toggle', attrs: { 'aria-expanded': 'false' } },
    async () => {
      const open = body.hidden
      body.hidden = !open
      toggle.setAttribute('aria-expanded', String(open))
      if (!open || drawn) return
      drawn = true
      // A CommonJS package: its module.exports is the default export, as in Node.
      const { toCanvas } = (await import('qrcode')).default
      await toCanvas(canvas, pageUrl, { margin: 1, width: 220, errorCorrectionLevel: 'M' })
    },
  )
  return h('section', { className: 'phone-qr desktop-only' }, toggle, body)
}
