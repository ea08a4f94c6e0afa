// The HTML shell of the signing page. It holds no payload data (the script fetches everything), so it is the same for
// every uuid and can be cached; it has no inline script or style, so the strict policy below can be sent with it.
import { renderPageShell } from '../shared/page-shell.js'

/**
 * The Content-Security-Policy to send with the shell. img-src allows Xaman's QR images (xumm.app); the wallet
 * extensions talk to the page through window messages and WebHID needs no network, so nothing else is opened.
 */
export const SIGNING_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https://xumm.app; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

export interface SigningPageHtmlOptions {
  title: string
  /** URL of the bundled entry (dist/web/sign.js); its chunks load from beside it. */
  scriptSrc: string
  /** URL of dist/web/sign.css. */
  styleHref: string
}

export function renderSigningPageHtml(options: SigningPageHtmlOptions): string {
  return renderPageShell({
    ...options,
    referrer: 'no-referrer',
    bodyHtml: `<main id="app" class="page">
<p class="loading" data-testid="loading">Loading the request…</p>
</main>
<noscript><p class="page">This page needs JavaScript to talk to your wallet.</p></noscript>`,
  })
}
