// The account's projects and the form that creates one; a new project's API key is shown here once.
import { MAX_NAME_CHARS } from '../../../features/projects/names.js'
import { api, type CreatedProject, type ProjectSummary } from '../api.js'
import { type PageContext, planBadge } from '../page.js'
import { paths } from '../router.js'
import { emptyState, field, formatTime, h, input, link, onSubmit, replaceChildren, secretOnce, submitButton } from '../ui.js'

export async function projectsPage(view: HTMLElement, context: PageContext): Promise<void> {
  const projects = await api.projects()
  if (!context.isCurrent()) return
  draw(view, context, projects)
}

function draw(view: HTMLElement, context: PageContext, projects: ProjectSummary[], created?: CreatedProject): void {
  const name = input({ name: 'name', placeholder: 'My shop', required: true, maxLength: MAX_NAME_CHARS })
  const form = h(
    'form',
    { className: 'inline-form', testId: 'create-project' },
    field('Project name', name),
    submitButton('Create project'),
  )
  onSubmit(form, async () => {
    const project = await api.createProject(name.value)
    const refreshed = await api.projects()
    if (context.isCurrent()) draw(view, context, refreshed, project)
  })

  const list =
    projects.length === 0
      ? emptyState(
          'h2',
          'Create your first project',
          h('p', {}, 'A project holds your API keys, payloads and webhooks. Name it after the app that will ask users to sign.'),
          h('p', {}, 'You get an API key at once; with it your server can create its first payload.'),
        )
      : h(
          'ul',
          { className: 'project-list', testId: 'project-list' },
          ...projects.map((project) =>
            h(
              'li',
              {},
              link(paths.project(project.id), project.name, { className: 'project-link' }),
              ' ',
              planBadge(project.plan),
              h('small', { className: 'muted' }, `Created ${formatTime(project.createdAt)}`),
            ),
          ),
        )

  replaceChildren(
    view,
    h('h1', {}, 'Projects'),
    created
      ? h(
          'div',
          { className: 'created' },
          secretOnce(`API key of ${created.name}`, created.apiKey, 'new-project-key'),
          h('p', {}, link(paths.project(created.id), `Open ${created.name}`), ' to see how to create your first payload.'),
        )
      : null,
    list,
    h('h2', {}, 'New project'),
    form,
  )
}
