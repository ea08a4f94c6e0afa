// The HTML shell shared by the service's pages: no data and no inline script or style, so that a strict
// Content-Security-Policy can be sent with it and the same document serves every path of a page.

export interface PageShellOptions {
  title: string
  /** The referrer policy the page asks for (the signing page sends none: its URL is a capability). */
  referrer: 'no-referrer' | 'same-origin'
  /** The page's script; none for a page of static markup alone. */
  scriptSrc?: string
  styleHref: string
  /** Static markup of the body before the script runs; never data from a request. */
  bodyHtml: string
}

export function renderPageShell(options: PageShellOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${options.referrer}">
<meta name="robots" content="noindex">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${escapeHtml(options.styleHref)}">
${options.scriptSrc === undefined ? '' : `<script type="module" src="${escapeHtml(options.scriptSrc)}"></script>\n`}</head>
<body>
${options.bodyHtml}
</body>
</html>
`
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}
