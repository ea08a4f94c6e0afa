// What the signing page shows of a project, set by its owner: the display name, the website (verified by a proof
// file the site publishes) and the logo; and the plan with its limits.
import { api, type ProjectDetail } from '../api.js'
import { type PageContext, planBadge, projectFrame } from '../page.js'
import {
  badge,
  button,
  copyButton,
  errorMessage,
  field,
  formatDuration,
  formatTime,
  h,
  input,
  onSubmit,
  replaceChildren,
  submitButton,
} from '../ui.js'

/** The service's own limit (MAX_LOGO_BYTES): checked here too, so that a large file is refused before it is sent. */
const MAX_LOGO_BYTES = 100 * 1024
const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp']

export async function settingsPage(view: HTMLElement, context: PageContext, projectId: string): Promise<void> {
  const project = await api.project(projectId)
  if (!context.isCurrent()) return
  draw(view, context, project)
}

function draw(view: HTMLElement, context: PageContext, project: ProjectDetail, notice?: HTMLElement): void {
  const redraw = (fresh: ProjectDetail, message?: HTMLElement) => {
    if (context.isCurrent()) draw(view, context, fresh, message)
  }
  replaceChildren(
    view,
    ...projectFrame(
      project,
      'settings',
      notice ?? null,
      h('h2', {}, 'On the signing page'),
      h('p', { className: 'muted' }, 'What your users see when your app sends them to approve a request.'),
      identityForm(project, redraw),
      websiteSection(project, redraw),
      logoSection(project, redraw),
      planSection(project),
    ),
  )
}

type Redraw = (project: ProjectDetail, notice?: HTMLElement) => void

function identityForm(project: ProjectDetail, redraw: Redraw): HTMLElement {
  const displayName = input({ name: 'displayName', placeholder: project.name, maxLength: 100 })
  displayName.value = project.displayName ?? ''
  const website = input({ name: 'websiteUrl', type: 'url', placeholder: 'https://shop.example' })
  website.value = project.website?.url ?? ''
  const form = h(
    'form',
    { className: 'stack-form settings-card', testId: 'project-settings' },
    field('Display name', displayName, `Shown to your users; empty shows the project name, “${project.name}”.`),
    field('Website', website, 'Its address is shown once your site proves it is yours (below). https only.'),
    submitButton('Save'),
  )
  onSubmit(form, async () => {
    const fresh = await api.updateProject(project.id, { displayName: displayName.value, websiteUrl: website.value })
    redraw(fresh, h('p', { className: 'notice', testId: 'saved', attrs: { role: 'status' } }, 'Saved.'))
  })
  return form
}

function websiteSection(project: ProjectDetail, redraw: Redraw): HTMLElement | null {
  const site = project.website
  if (site === null) return null
  const result = h('div', { attrs: { role: 'status' } })
  const check = button('Check now', async () => {
    check.disabled = true
    try {
      const { check: outcome, project: fresh } = await api.verifyWebsite(project.id)
      redraw(
        fresh,
        outcome.verified
          ? h('p', { className: 'notice', testId: 'verify-result', attrs: { role: 'status' } }, `${site.url} is verified.`)
          : h(
              'div',
              { className: 'error', testId: 'verify-result', attrs: { role: 'alert' } },
              h('p', {}, `Not verified: ${outcome.problem ?? 'the proof was not found'}.`),
            ),
      )
    } catch (error) {
      check.disabled = false
      replaceChildren(result, errorMessage(error))
    }
  })
  const proof = h('code', { className: 'break', testId: 'proof-line' }, site.proofLine)
  return h(
    'section',
    { className: 'card settings-card', testId: 'website' },
    h('h3', {}, 'Website ', site.verified ? badge('Verified', 'ok') : badge('Not verified', 'warn')),
    h('p', {}, h('a', { attrs: { href: site.url, rel: 'noreferrer', target: '_blank' } }, site.url)),
    site.verified
      ? h('p', { className: 'muted' }, `Proof last found ${formatTime(site.verifiedAt)}. Check again after changing the file.`)
      : h('p', {}, 'Until it is verified, the signing page does not show it.'),
    h('p', {}, 'To prove the site is yours, publish this line in a text file at ', h('code', { className: 'break' }, site.proofUrl), ':'),
    h('div', { className: 'secret-row' }, proof, copyButton(site.proofLine, { className: 'button secondary', select: proof })),
    h(
      'p',
      { className: 'muted' },
      'Countersign fetches the file from the public internet, without following redirects. A file may hold the lines of several projects.',
    ),
    h('div', { className: 'actions' }, check),
    result,
  )
}

function logoSection(project: ProjectDetail, redraw: Redraw): HTMLElement {
  const file = h('input', { attrs: { type: 'file', name: 'logo', accept: LOGO_TYPES.join(',') } })
  const result = h('div', {})
  const form = h(
    'form',
    { className: 'stack-form', testId: 'logo-form' },
    field('Logo file', file, 'PNG, JPEG or WebP, at most 100 KB; square, 96 × 96 pixels or more, looks best.'),
    submitButton('Upload logo'),
  )
  onSubmit(form, async () => {
    const chosen = file.files?.[0]
    if (chosen === undefined) throw new Error('Choose an image file first')
    if (!LOGO_TYPES.includes(chosen.type)) throw new Error(`${chosen.name} is not a PNG, JPEG or WebP image`)
    if (chosen.size > MAX_LOGO_BYTES) throw new Error(`${chosen.name} is ${Math.ceil(chosen.size / 1024)} KB: the limit is 100 KB`)
    redraw(await api.setLogo(project.id, await dataUrl(chosen)))
  })
  const remove =
    project.logoUrl === null
      ? null
      : button(
          'Remove logo',
          async () => {
            remove?.setAttribute('disabled', '')
            try {
              redraw(await api.deleteLogo(project.id))
            } catch (error) {
              remove?.removeAttribute('disabled')
              replaceChildren(result, errorMessage(error))
            }
          },
          { className: 'button secondary' },
        )
  return h(
    'section',
    { className: 'card settings-card', testId: 'logo' },
    h('h3', {}, 'Logo'),
    project.logoUrl === null
      ? h('p', { className: 'muted' }, 'No logo: the signing page shows the name alone.')
      : h(
          'div',
          { className: 'logo-row' },
          h('img', {
            className: 'logo-preview',
            testId: 'logo-preview',
            attrs: { src: project.logoUrl, alt: `Logo of ${project.name}`, width: '64', height: '64' },
          }),
          remove,
        ),
    form,
    result,
  )
}

function planSection(project: ProjectDetail): HTMLElement {
  const { limits } = project
  return h(
    'section',
    { className: 'card settings-card', testId: 'plan' },
    h('h3', {}, 'Plan ', planBadge(project.plan)),
    h(
      'dl',
      { className: 'fields compact' },
      ...(
        [
          ['Payloads a month', limits.monthlyPayloads.toLocaleString()],
          ['Requests a minute', limits.requestsPerMinute.toLocaleString()],
          ['Shortest poll interval', formatDuration(limits.minPollIntervalMs / 1000)],
          ['Longest expiry', formatDuration(limits.maxExpiresInSeconds)],
          ['Webhooks', project.plan === 'pro' ? 'Yes' : 'Pro only'],
        ] as const
      ).map(([label, value]) => h('div', {}, h('dt', {}, label), h('dd', {}, value))),
    ),
    project.plan === 'pro'
      ? null
      : h(
          'p',
          { className: 'muted' },
          'The operator of this service moves a project to Pro with ',
          h('code', {}, `countersign project set-plan ${project.id} pro`),
          '.',
        ),
  )
}

function dataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(String(reader.result))
    reader.onerror = () => reject(new Error(`${file.name} could not be read`))
    reader.readAsDataURL(file)
  })
}
