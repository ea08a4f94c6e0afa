// The HTML shell of the dashboard. It holds no account or project data (the script fetches everything with the
// session cookie), so it is the same for every dashboard path; it has no inline script or style, so the strict
// policy below can be sent with it.
import { renderPageShell } from '../shared/page-shell.js'

/** The Content-Security-Policy to send with the shell: the page talks to its own origin only. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

export interface DashboardHtmlOptions {
  /** URL of the bundled entry (dist/web/dashboard.js). */
  scriptSrc: string
  /** URL of dist/web/dashboard.css. */
  styleHref: string
}

export function renderDashboardHtml(options: DashboardHtmlOptions): string {
  return renderPageShell({
    ...options,
    title: 'Countersign dashboard',
    referrer: 'same-origin',
    bodyHtml: `<div id="app" class="app">
<p class="loading" data-testid="loading">Loading the dashboard…</p>
</div>
<noscript><p class="view">The dashboard needs JavaScript.</p></noscript>`,
  })
}
