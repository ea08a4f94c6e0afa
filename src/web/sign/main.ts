// The signing page (the signingUrl, /sign/{uuid}): shows what is asked, lets the user approve with a wallet or reject,
// and follows the request's status live. Everything comes from the wallet-facing API; the HTML shell holds no payload data.
// This entry loads the request and hands it to the page (signing-page.ts), or says why it cannot.

import { type Clock, systemClock } from '../../platform/clock.js'
import { ApiError } from '../shared/api-client.js'
import { h, replaceChildren } from '../shared/dom.js'
import { fetchSignRequest } from './api.js'
import { messageOf } from './problems.js'
import { SigningPage } from './signing-page.js'

/** Beyond this gap the server's clock (its Date header) is trusted over the device's for the countdown. */
const CLOCK_SKEW_THRESHOLD_MS = 5000

void main()

async function main(): Promise<void> {
  const root = document.getElementById('app')
  if (root === null) return
  const uuid = /^\/sign\/([^/]+)\/?$/.exec(location.pathname)?.[1]
  if (uuid === undefined) {
    showProblemPage(root, 'This is not a signing link', 'Check the link you were given.')
    return
  }
  try {
    const { request, serverDateMs } = await fetchSignRequest(decodeURIComponent(uuid))
    new SigningPage(root, request, clockFollowing(serverDateMs)).start()
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      showProblemPage(root, 'This signing request does not exist', 'The link may be mistyped, or the request was removed.')
    } else {
      showProblemPage(root, 'The request could not be loaded', `${messageOf(error)}. Reload the page to try again.`)
    }
  }
}

function clockFollowing(serverDateMs: number | null): Clock {
  const offsetMs = serverDateMs === null ? 0 : serverDateMs - systemClock.now()
  return Math.abs(offsetMs) > CLOCK_SKEW_THRESHOLD_MS ? { now: () => systemClock.now() + offsetMs } : systemClock
}

function showProblemPage(root: HTMLElement, title: string, message: string): void {
  replaceChildren(root, h('section', { className: 'outcome outcome-problem', testId: 'error' }, h('h1', {}, title), h('p', {}, message)))
}
