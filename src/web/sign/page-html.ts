// The HTML shell of the signing page. It holds no payload data (the script fetches everything), so it is the same for
// every uuid and can be cached; it has no inline script or style, so the strict policy of platform/http/security-headers.ts can be sent with it.
import { renderPageShell } from '../shared/page-shell.js'

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
