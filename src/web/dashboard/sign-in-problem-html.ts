// The page a browser gets when signing in to the dashboard fails at one of the /auth routes (a one-time link that does
// not work, a provider that refused or cannot be reached, a flow that expired): the dashboard's sign-in look, what
// went wrong and the one thing to do next. The pages' shell with no script, served under the pages' policy
// (features/accounts/routes.ts); clients that do not ask for HTML get the error as JSON instead.
import { escapeHtml, renderPageShell } from '../shared/page-shell.js'

export type SignInProblem =
  /** A one-time link that was used, expired or cut short. */
  | { kind: 'link' }
  /** A one-time link on a server that signs in with its OpenID Connect provider. */
  | { kind: 'links-off' }
  /** /auth/login or /auth/callback on a server with no provider. */
  | { kind: 'provider-off' }
  /** The provider's sign-in failed: `message` is the service's own error text (it may quote the provider's code). */
  | { kind: 'provider'; status: number; message: string }

/** The most of an error's text a page shows: a provider's error description is not ours to bound. */
const MAX_MESSAGE_CHARS = 400

/** How to get a one-time link, under a heading that fits the page. */
const loginLinkCommand = (heading: string) => `<div class="card">
<h2>${heading}</h2>
<p>On the server, print a fresh one-time link, then open it in this browser:</p>
<pre><code>npx countersign login-link</code></pre>
</div>`

const DASHBOARD_LINE = '<p><a href="/dashboard">Go to the dashboard</a>: if this browser is already signed in, it opens.</p>'

export function renderSignInProblemHtml(problem: SignInProblem, styleHref: string): string {
  const { title, body } = describe(problem)
  return renderPageShell({
    title: `${title} · Countersign`,
    referrer: 'no-referrer',
    styleHref,
    bodyHtml: `<main class="view sign-in" data-testid="sign-in-problem">
<h1>${escapeHtml(title)}</h1>
${body}
${DASHBOARD_LINE}
</main>`,
  })
}

function describe(problem: SignInProblem): { title: string; body: string } {
  switch (problem.kind) {
    case 'link':
      return {
        title: 'This sign-in link does not work',
        body: `<p>It was already used, it expired (a link lasts 15 minutes), or part of it was lost when it was copied.</p>
${loginLinkCommand('Ask for a new link')}`,
      }
    case 'links-off':
      return {
        title: 'Sign-in links are turned off on this server',
        body: `<p>This server signs people in with its identity provider, so one-time links do not open a session here.</p>
<p><a class="button" href="/auth/login">Sign in</a></p>`,
      }
    case 'provider-off':
      return {
        title: 'This server has no sign-in provider',
        body: `<p>No OpenID Connect provider is configured here: the administrator signs in with one-time links instead.</p>
${loginLinkCommand('Sign in with a one-time link')}`,
      }
    case 'provider': {
      const message = problem.message.length > MAX_MESSAGE_CHARS ? `${problem.message.slice(0, MAX_MESSAGE_CHARS)}…` : problem.message
      const [title, again] =
        problem.status === 403
          ? ['This account may not sign in here', 'Start again']
          : problem.status === 502
            ? ['The sign-in provider could not be reached', 'Try again']
            : ['Sign-in did not complete', 'Start again']
      return {
        title,
        body: `<p data-testid="sign-in-problem-reason">${escapeHtml(message)}</p>
<p><a class="button" href="/auth/login">${again}</a></p>`,
      }
    }
  }
}
