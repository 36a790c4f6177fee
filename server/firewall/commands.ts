import { DomainError, conflict, invalid, notFound } from '../common/errors'
import { makeEvent } from '../events/factory'
import { requireFirewallPermission, requireNamespacePermission } from '../auth/permissions'
import { actorOfCall, nowIso, type CallContext } from '../app/context'
import type { FirewallVersion } from '../../storage/repositories/firewalls'
import type { EventType } from '../events/schemas'
import { isSameConfig, permissionsForChange, summarizeChange } from './diff'
import { redactFirewall, restoreRedacted } from './redact'
import { validateReferences } from './references'
import { FirewallInput, type Exception, type Firewall, type FirewallPermission, type Rule } from './schema'

export interface FirewallWrite {
  firewall: Firewall
  created: boolean
}

function eventFor(ctx: CallContext, type: EventType, firewall: Firewall) {
  return makeEvent(ctx.services.clock, ctx.ns, type, {
    firewall: firewall.id,
    version: firewall.version,
    ecosystem: firewall.ecosystem,
    actor: actorOfCall(ctx),
    config: redactFirewall(firewall),
  })
}

function checkVersion(current: Firewall | null, ifMatch: number | undefined): void {
  if (ifMatch === undefined) return
  if (!current || current.version !== ifMatch) {
    throw new DomainError('precondition_failed', 'version_mismatch', `If-Match "${ifMatch}" does not match the current version ${current ? `"${current.version}"` : '(none)'}`)
  }
}

interface Edit {
  /** Permission needed for the edit itself (checked against the current document). */
  permission: FirewallPermission | ((current: Firewall, next: Firewall) => FirewallPermission[])
  ifMatch?: number
  /** Builds the next configuration; throw a DomainError to refuse. */
  apply: (current: Firewall) => Firewall
  summary?: (current: Firewall, next: Firewall) => string
}

/**
 * The one path every change to an existing firewall takes: permission, If-Match and the
 * change are checked against the document inside the transaction, the version goes up by
 * one, history and one `config.firewall.updated` event are written atomically.
 */
export async function editFirewall(ctx: CallContext, id: string, edit: Edit): Promise<Firewall> {
  const preview = await ctx.services.firewalls.get(ctx.ns, id)
  if (!preview) throw notFound('firewall', id)
  const previewNext = edit.apply(preview)
  await validateReferences(ctx.services, ctx.ns, id, previewNext, preview)
  return ctx.services.firewalls.mutate(ctx.ns, id, actorOfCall(ctx), nowIso(ctx), (current) => {
    if (!current) throw notFound('firewall', id)
    const next = edit.apply(current)
    const needed = typeof edit.permission === 'function' ? edit.permission(current, next) : [edit.permission]
    for (const permission of needed) requireFirewallPermission(ctx.principal, current, permission)
    checkVersion(current, edit.ifMatch)
    if (isSameConfig(current, next)) {
      return { next: current, summary: '', result: () => current, unchanged: true }
    }
    return {
      next,
      summary: edit.summary?.(current, next) ?? summarizeChange(current, next),
      also: (stored) => ({ events: [eventFor(ctx, 'config.firewall.updated', stored!)] }),
      result: (stored) => stored!,
    }
  })
}

/** `PUT /config/{fw}`: create (201) or replace. */
export async function putFirewall(ctx: CallContext, id: string, body: FirewallInput, ifMatch?: number): Promise<FirewallWrite> {
  if (body.id !== undefined && body.id !== id) throw invalid('id_mismatch', `body id "${body.id}" differs from the path id "${id}"`, [{ path: 'id', message: 'must equal the path id' }])
  const existing = await ctx.services.firewalls.get(ctx.ns, id)
  if (existing) {
    if (body.ecosystem !== existing.ecosystem) throw invalid('ecosystem_immutable', `the ecosystem of firewall "${id}" is ${existing.ecosystem} and cannot change`, [{ path: 'ecosystem', message: 'cannot change' }])
    const firewall = await editFirewall(ctx, id, {
      ifMatch,
      permission: (current, next) => {
        const needed = permissionsForChange(current, next)
        return needed.length ? needed : ['fw:update:config']
      },
      apply: (current) => fromInput(id, restoreRedacted(body, current), current),
    })
    return { firewall, created: false }
  }
  requireNamespacePermission(ctx.principal, 'ns:firewalls:create')
  if (ifMatch !== undefined) checkVersion(null, ifMatch)
  const input = restoreRedacted(body, null)
  await validateReferences(ctx.services, ctx.ns, id, input)
  return createFirewall(ctx, id, input, 'created')
}

async function createFirewall(ctx: CallContext, id: string, input: FirewallInput, summary: string): Promise<FirewallWrite> {
  const firewall = await ctx.services.firewalls.mutate(ctx.ns, id, actorOfCall(ctx), nowIso(ctx), (current) => {
    if (current) throw conflict('firewall_exists', `firewall "${id}" already exists`)
    return {
      next: fromInput(id, input, null),
      summary,
      also: (stored) => ({ events: [eventFor(ctx, 'config.firewall.created', stored!)] }),
      result: (stored) => stored!,
    }
  })
  return { firewall, created: true }
}

function fromInput(id: string, input: FirewallInput, current: Firewall | null): Firewall {
  return {
    id,
    version: current?.version ?? 0,
    ecosystem: input.ecosystem,
    name: input.name ?? current?.name ?? id,
    description: input.description,
    upstreams: input.upstreams,
    rules: input.rules,
    exceptions: input.exceptions,
    permissions: input.permissions,
    extends: input.extends,
    updatedAt: current?.updatedAt ?? '',
  }
}

export async function deleteFirewall(ctx: CallContext, id: string, ifMatch?: number): Promise<void> {
  await ctx.services.firewalls.mutate(ctx.ns, id, actorOfCall(ctx), nowIso(ctx), (current) => {
    if (!current) throw notFound('firewall', id)
    requireFirewallPermission(ctx.principal, current, 'fw:delete')
    checkVersion(current, ifMatch)
    return {
      next: null,
      summary: 'deleted',
      also: () => ({ events: [eventFor(ctx, 'config.firewall.deleted', current)] }),
      result: () => undefined,
    }
  })
}

function upsertById<T extends { id: string }>(items: T[], item: T): T[] {
  const index = items.findIndex((existing) => existing.id === item.id)
  return index < 0 ? [...items, item] : items.map((existing, i) => (i === index ? item : existing))
}

export async function upsertRule(ctx: CallContext, id: string, rule: Rule, ifMatch?: number): Promise<FirewallWrite> {
  const before = await ctx.services.firewalls.get(ctx.ns, id)
  const created = !before?.rules.some((r) => r.id === rule.id)
  const firewall = await editFirewall(ctx, id, { permission: 'fw:update:rule', ifMatch, apply: (fw) => ({ ...fw, rules: upsertById(fw.rules, rule) }) })
  return { firewall, created }
}

export function deleteRule(ctx: CallContext, id: string, ruleId: string, ifMatch?: number): Promise<Firewall> {
  return editFirewall(ctx, id, {
    permission: 'fw:update:rule',
    ifMatch,
    apply: (fw) => {
      if (!fw.rules.some((r) => r.id === ruleId)) throw notFound('rule', ruleId)
      return { ...fw, rules: fw.rules.filter((r) => r.id !== ruleId) }
    },
  })
}

export async function upsertException(ctx: CallContext, id: string, exception: Exception, ifMatch?: number): Promise<FirewallWrite> {
  const before = await ctx.services.firewalls.get(ctx.ns, id)
  const created = !before?.exceptions.some((e) => e.id === exception.id)
  const firewall = await editFirewall(ctx, id, {
    permission: 'fw:update:exception',
    ifMatch,
    apply: (fw) => ({ ...fw, exceptions: upsertById(fw.exceptions, exception) }),
  })
  return { firewall, created }
}

export function deleteException(ctx: CallContext, id: string, exceptionId: string, ifMatch?: number): Promise<Firewall> {
  return editFirewall(ctx, id, {
    permission: 'fw:update:exception',
    ifMatch,
    apply: (fw) => {
      if (!fw.exceptions.some((e) => e.id === exceptionId)) throw notFound('exception', exceptionId)
      return { ...fw, exceptions: fw.exceptions.filter((e) => e.id !== exceptionId) }
    },
  })
}

/** `PUT /config/{fw}/version/{v}`: a new version equal to the old configuration. */
export async function rollback(ctx: CallContext, id: string, version: number, ifMatch?: number): Promise<Firewall> {
  const target: FirewallVersion | null = await ctx.services.firewalls.getVersion(ctx.ns, id, version)
  const current = await ctx.services.firewalls.get(ctx.ns, id)
  if (!current) throw notFound('firewall', id)
  requireFirewallPermission(ctx.principal, current, 'fw:read')
  if (!target || version > current.version) throw notFound('version', String(version))
  return editFirewall(ctx, id, {
    ifMatch,
    permission: (now, next) => ['fw:update:config', ...permissionsForChange(now, next)],
    apply: (fw) => ({ ...target.config, version: fw.version, updatedAt: fw.updatedAt, ecosystem: fw.ecosystem }),
    summary: (now, next) => `rolled back to version ${version} (${summarizeChange(now, next)})`,
  })
}

/** `POST /config/{fw}/clone`: a new firewall (version 1) with the source's configuration. */
export async function cloneFirewall(ctx: CallContext, sourceId: string, targetId: string, name?: string): Promise<FirewallWrite> {
  const source = await ctx.services.firewalls.get(ctx.ns, sourceId)
  if (!source) throw notFound('firewall', sourceId)
  requireFirewallPermission(ctx.principal, source, 'fw:clone')
  const input = FirewallInput.parse({ ...source, id: targetId, name: name ?? `${source.name} (copy)`, version: undefined, updatedAt: undefined })
  return createFirewall(ctx, targetId, input, `cloned from ${sourceId} version ${source.version}`)
}
