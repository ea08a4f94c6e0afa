// The page of a visitor without a session: a sign-in button when the server has an OpenID Connect provider, or how
// to get the local admin's one-time link when it has none.
import { h, link, replaceChildren } from '../ui.js'

/** `oidc` comes from GET /auth/methods: whether this server has an OpenID Connect provider. */
export function signInPage(root: HTMLElement, oidc: boolean): void {
  replaceChildren(
    root,
    h(
      'main',
      { className: 'view sign-in', testId: 'sign-in' },
      h('h1', {}, 'Countersign dashboard'),
      h('p', {}, 'Create projects, manage API keys, follow your payloads and webhooks.'),
      oidc
        ? link('/auth/login', 'Sign in', { className: 'button', testId: 'sign-in-link' })
        : h(
            'div',
            { className: 'card' },
            h('h2', {}, 'Sign in with a one-time link'),
            h(
              'p',
              {},
              'This server has no identity provider configured, so its administrator signs in with a link that works once, for 15 minutes.',
            ),
            h('p', {}, 'Open the link printed when the server started, or print a fresh one on the server:'),
            h('pre', {}, h('code', {}, 'npx countersign login-link')),
          ),
    ),
  )
}
