// The HTML shell of the dashboard. It holds no account or project data (the script fetches everything with the
// session cookie), so it is the same for every dashboard path; it has no inline script or style, so the strict
// policy below can be sent with it.

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
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="robots" content="noindex">
<title>Countersign dashboard</title>
<link rel="stylesheet" href="${escapeHtml(options.styleHref)}">
<script type="module" src="${escapeHtml(options.scriptSrc)}"></script>
</head>
<body>
<div id="app" class="app">
<p class="loading" data-testid="loading">Loading the dashboard…</p>
</div>
<noscript><p class="view">The dashboard needs JavaScript.</p></noscript>
</body>
</html>
`
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}
