import { canSeeFirewall, hasNamespacePermission } from '../../auth/permissions'
import { notFound } from '../../common/errors'
import { getExceptionRequest, listExceptionRequests } from '../../exception-requests'
import { listWebhooks } from '../../webhooks/configuration/crud'
import { webhookState } from '../../webhooks/configuration/delivery-control'
import { card, heading } from '../components'
import { drawMachine } from '../diagram'
import type { DashboardRequest } from '../handler'
import { href, html, raw, type Html } from '../html'
import { layout } from '../layout'
import { liveDiagram } from '../live-diagram'
import { MACHINE_CATALOG, type CatalogEntry } from '../machine-catalog'

/** `/namespaces/{ns}/machines[/{name}?actor=]`: every machine, and one with a chosen actor live. */

interface ActorOption {
  value: string
  label: string
}

async function actorOptions(req: DashboardRequest, entry: CatalogEntry): Promise<ActorOption[]> {
  if (entry.actor === 'webhook') {
    if (!hasNamespacePermission(req.ctx.principal, 'ns:webhooks:read')) return []
    return (await listWebhooks(req.ctx)).map((wh) => ({ value: wh.id, label: `${wh.name} (${wh.id})` }))
  }
  const firewalls = (await req.services.firewalls.list(req.ctx.ns)).filter((fw) =>
    canSeeFirewall(req.ctx.principal, fw),
  )
  const lists = await Promise.all(
    firewalls.map((fw) =>
      listExceptionRequests(req.ctx, fw.id, { limit: 50 }).then(
        (page) => page.items,
        () => [],
      ),
    ),
  )
  return lists
    .flat()
    .slice(-100)
    .reverse()
    .map((r) => ({
      value: `${r.firewallId}/${r.id}`,
      label: `${r.id} · ${r.firewallId} · ${r.proposedException.selector.packageName} · ${r.status}`,
    }))
}

/** The chosen actor's live diagram (permission-checked through the domain reads). */
async function actorDiagram(req: DashboardRequest, entry: CatalogEntry, actor: string): Promise<Html> {
  const { ns } = req.viewer
  if (entry.actor === 'webhook') {
    const [state, snapshot] = await Promise.all([
      webhookState(req.ctx, actor),
      req.services.webhooks.loadSnapshot(ns, actor),
    ])
    const value = (snapshot as { value?: unknown } | null)?.value ?? state.state
    return liveDiagram(
      entry.machine,
      value,
      href('namespaces', ns, 'live', 'webhooks', actor),
      `${entry.title} of ${actor}`,
    )
  }
  const [fw, id] = actor.split('/')
  if (!fw || !id) throw notFound('exception request', actor)
  const request = await getExceptionRequest(req.ctx, fw, id)
  return liveDiagram(
    entry.machine,
    request.status,
    href('namespaces', ns, 'live', 'exception-requests', fw, id),
    `${entry.title} ${id}`,
  )
}

function picker(req: DashboardRequest, entry: CatalogEntry, options: ActorOption[], chosen?: string): Html {
  if (!options.length)
    return html`<p class="small muted">
      No ${entry.actor === 'webhook' ? 'webhook' : 'exception request'} you can see runs this machine yet.
    </p>`
  return html`<form
    method="get"
    action="${href('namespaces', req.viewer.ns, 'machines', entry.name)}"
    class="inline-form"
  >
    <label
      >Actor
      <select name="actor">
        ${options.map((o) => html`<option value="${o.value}" ${o.value === chosen ? ' selected' : ''}>${o.label}</option>`)}
      </select></label
    >
    <button class="button primary" type="submit">Show live state</button>
  </form>`
}

export async function machinesPage(req: DashboardRequest) {
  const sections = await Promise.all(
    MACHINE_CATALOG.map(async (entry) =>
      card(
        entry.title,
        html` <p class="small muted">Defined in <code>${entry.file}</code>.</p>
          ${picker(req, entry, await actorOptions(req, entry))}
          <div class="diagram-scroll" tabindex="0" role="region" aria-label="${entry.title} machine">
            ${raw(await drawMachine(entry.machine, undefined, { title: `${entry.title} machine` }))}
          </div>`,
      ),
    ),
  )
  const body = html`${heading('State machines', '', 'Every machine in machines/, drawn from its definition. Pick an actor to watch its state live.')}${sections}`
  return layout({ title: 'State machines', section: 'machines', viewer: req.viewer, flash: req.flash, body })
}

export async function machinePage(req: DashboardRequest) {
  const entry = MACHINE_CATALOG.find((e) => e.name === req.params.machine)
  if (!entry) throw notFound('machine', req.params.machine)
  const actor = req.query.get('actor') ?? undefined
  const diagram = actor
    ? await actorDiagram(req, entry, actor)
    : html`<div class="diagram-scroll">
        ${raw(await drawMachine(entry.machine, undefined, { title: `${entry.title} machine` }))}
      </div>`
  const body = html`${heading(`${entry.title} machine`, '', html`Defined in <code>${entry.file}</code>.`)}
  ${card('Actor', picker(req, entry, await actorOptions(req, entry), actor))} ${card('Diagram', diagram, 'machine')}`
  return layout({
    title: `${entry.title} machine`,
    section: 'machines',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [['Machines', href('namespaces', req.viewer.ns, 'machines')]],
    body,
  })
}
