// The page a browser gets for a one-time sign-in link that does not work (used, expired, or cut short when copied):
// the dashboard's sign-in look, what went wrong and how to get a new link. The pages' shell with no script, served
// under the pages' policy (features/accounts/routes.ts).
import { renderPageShell } from '../shared/page-shell.js'

export interface SignInLinkHtmlOptions {
  /** URL of dist/web/dashboard.css. */
  styleHref: string
}

export function renderSignInLinkProblemHtml(options: SignInLinkHtmlOptions): string {
  return renderPageShell({
    title: 'This sign-in link does not work · Countersign',
    referrer: 'no-referrer',
    styleHref: options.styleHref,
    bodyHtml: `<main class="view sign-in" data-testid="sign-in-link-problem">
<h1>This sign-in link does not work</h1>
<p>It was already used, it expired (a link lasts 15 minutes), or part of it was lost when it was copied.</p>
<div class="card">
<h2>Ask for a new link</h2>
<p>On the server, print a fresh one-time link, then open it in this browser:</p>
<pre><code>npx countersign login-link</code></pre>
</div>
<p><a href="/dashboard">Go to the dashboard</a>: if this browser is already signed in, it opens.</p>
</main>`,
  })
}
