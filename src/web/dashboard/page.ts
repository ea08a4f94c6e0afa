// What every dashboard page receives, and the frame of a project's pages (its name, plan and tabs).
import type { ProjectSummary } from './api.js'
import { type ProjectPage, paths } from './router.js'
import { badge, type Child, h, link } from './ui.js'

export interface PageContext {
  navigate(url: string, replace?: boolean): void
  /** False once the user has moved to another page: a slow answer must not draw over the new page. */
  isCurrent(): boolean
}

export type Page = (view: HTMLElement, context: PageContext) => Promise<void>

const TABS: [ProjectPage, string][] = [
  ['overview', 'Overview'],
  ['keys', 'API keys'],
  ['payloads', 'Payloads'],
  ['webhooks', 'Webhooks'],
  ['settings', 'Settings'],
]

export function planBadge(plan: string): HTMLElement {
  return badge(plan === 'pro' ? 'Pro' : 'Free', `plan-${plan}`)
}

export function projectFrame(project: ProjectSummary, active: ProjectPage, ...content: Child[]): HTMLElement[] {
  const tabs = h(
    'nav',
    { className: 'tabs', attrs: { 'aria-label': 'Project sections' } },
    ...TABS.map(([page, label]) =>
      link(paths.project(project.id, page), label, page === active ? { attrs: { 'aria-current': 'page' } } : {}),
    ),
  )
  const frame: (HTMLElement | null)[] = [
    h('p', { className: 'crumbs' }, link(paths.projects(), 'Projects'), ' / '),
    h('h1', { testId: 'project-name' }, project.name, ' ', planBadge(project.plan)),
    project.displayName !== null && project.displayName !== project.name
      ? h('p', { className: 'muted shown-as' }, `Shown to your users as “${project.displayName}”`)
      : null,
    tabs,
    h('div', { className: 'section' }, ...content),
  ]
  return frame.filter((element): element is HTMLElement => element !== null)
}
