import type { FirewallCall } from './ports'
import { DomainError, conflict, invalid, notFound, firewallNotFound } from '../common/errors'
import { makeEvent } from '../events/factory'
import {
  canOnFirewall,
  canSeeFirewall,
  requireFirewallPermission,
  requireNamespacePermission,
} from '../auth/permissions'
import { actorOfCall, nowIso, type PendingAudit } from '../auth/call-context'
import type { FirewallVersion } from '../../storage/repositories/firewalls'
import type { TxWrites } from '../../storage/backend'
import { mergeWrites } from '../../storage/tx-part'
import { takeCheckedFirewall } from './call-read'
import type { Actor, EventType } from '../events/schemas'
import { permissionsForChange, summarizeChange, touchesCredentials } from './diff'
import { redactFirewall, refuseUnrestored, restoreRedacted } from './redact'
import { grantsAdded, grantsAddedInSlices, requireMayGrant } from '../auth/granting'
import { TimeSlice } from '../common/time-slice'
import { firewallValidationContext, validateFirewall } from './validation'
import { FirewallInput, type Exception, type Firewall, type FirewallPermission, type Rule } from './schema'

const readableBy = (ctx: FirewallCall) => (firewall: Firewall) => canOnFirewall(ctx.principal, firewall, 'fw:read')

interface FirewallWrite {
  firewall: Firewall
  created: boolean
}

function eventFor(ctx: FirewallCall, type: EventType, firewall: Firewall) {
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
    throw new DomainError(
      'precondition_failed',
      'version_mismatch',
      `If-Match "${ifMatch}" does not match the current version ${current ? `"${current.version}"` : '(none)'}`,
    )
  }
}

interface Edit {
  /** Permission needed for the edit itself (checked against the current document). */
  permission:
    | FirewallPermission
    | ((current: Firewall, next: Firewall, slice: TimeSlice) => FirewallPermission[] | Promise<FirewallPermission[]>)
  ifMatch?: number
  /** Builds the next configuration; throw a DomainError to refuse. `watched` holds the values of `watch`. */
  apply: (current: Firewall, watched: Map<string, unknown>) => Firewall
  summary?: (current: Firewall, next: Firewall, slice: TimeSlice) => string | Promise<string>
  /** Further keys read and guarded by the same transaction (e.g. exception requests). */
  watch?: string[]
  /** Further writes and events in the same transaction, after the change was accepted. */
  also?: (stored: Firewall, current: Firewall, watched: Map<string, unknown>) => TxWrites
  /** Refusals of what the caller sent (400) beyond `validateFirewall`, after the permission checks. */
  refuse?: (current: Firewall, next: Firewall) => void
  /** Where the body the caller sent sits in the next configuration (`rules[3]`), for error paths. */
  bodyAt?: (next: Firewall) => string
  /** A whole configuration (PUT, rollback): the limits apply to every rule, not only changed ones. */
  whole?: boolean
  /**
   * What the call answers when this change is stored (status, and for a 201 what it created): the
   * call's audit entry (`ctx.audit`) is then written in the change's own transaction.
   */
  answer?: (current: Firewall) => { status: number; createdId?: string }
}

/**
 * The one path every change to an existing firewall takes: permission, If-Match and the
 * change are checked against the document inside the transaction, the version goes up by
 * one, history and one `config.firewall.updated` event are written atomically.
 */
export async function editFirewall(ctx: FirewallCall, id: string, edit: Edit): Promise<Firewall> {
  // The access check's read, when the call made one: the transaction judges the stored document anyway.
  const checked = takeCheckedFirewall(ctx, id)
  const preview = checked !== undefined ? checked : await ctx.services.firewalls.get(ctx.ns, id)
  if (!preview) throw firewallNotFound(id)
  // Before the edit is even tried: its own errors ("rule not found") must not reveal a firewall the caller cannot see.
  if (typeof edit.permission === 'string') requireFirewallPermission(ctx.principal, preview, edit.permission)
  else if (!canSeeFirewall(ctx.principal, preview)) throw firewallNotFound(id)
  const watch = edit.watch ?? []
  const previewWatched = await ctx.services.firewalls.readWatched(watch)
  const previewNext = edit.apply(preview, previewWatched)
  const validation = await firewallValidationContext(
    ctx.services,
    ctx.ns,
    {
      id,
      previous: preview,
      readable: readableBy(ctx),
      bodyAt: edit.bodyAt?.(previewNext),
      rules: edit.whole ? 'all' : 'changed',
    },
    previewNext,
  )
  // The audit entry the last run of the transaction's body wrote with the change, if any.
  const written: { audit: PendingAudit | null } = { audit: null }
  /** The call's audit entry, when the call answers for this edit and its caller lets the command write it. */
  const auditWrites = (current: Firewall): TxWrites | null => {
    const answer = edit.answer?.(current)
    written.audit = answer && ctx.audit ? ctx.audit.success(answer.status, answer.createdId) : null
    return written.audit?.writes ?? null
  }
  const stored = await ctx.services.firewalls.mutate(
    ctx.ns,
    id,
    actorOfCall(ctx),
    nowIso(ctx),
    // A whole configuration is up to 1 MiB of outside input: each check below may take tens of
    // milliseconds on it, so each starts a turn of its own unless the work so far was short
    // (`fresh`; CONTRACT.md 8), the same checks in the same order.
    async (current, watched) => {
      written.audit = null
      const slice = new TimeSlice()
      if (!current) throw firewallNotFound(id)
      // As before the preview's edit: judged on the stored document, which may differ from the preview.
      if (typeof edit.permission === 'string') requireFirewallPermission(ctx.principal, current, edit.permission)
      else if (!canSeeFirewall(ctx.principal, current)) throw firewallNotFound(id)
      const next = edit.apply(current, watched)
      await slice.fresh()
      const needed =
        typeof edit.permission === 'function' ? await edit.permission(current, next, slice) : [edit.permission]
      for (const permission of needed) requireFirewallPermission(ctx.principal, current, permission)
      await slice.fresh()
      // Whatever the edit: a stored secret never changes or moves without fw:update:credentials,
      // and permissions are only handed out by someone who holds them.
      if (touchesCredentials(current, next)) requireFirewallPermission(ctx.principal, current, 'fw:update:credentials')
      requireMayGrant(ctx.principal, current, await grantsAddedInSlices(current.permissions, next.permissions, slice))
      edit.refuse?.(current, next)
      await slice.fresh()
      await validateFirewall(
        next,
        { ...validation, previous: current, startsFrom: current, bodyAt: edit.bodyAt?.(next) },
        slice,
      )
      checkVersion(current, edit.ifMatch)
      await slice.fresh()
      // One comparison serves both: a summary of 'no change' is the same configuration.
      const change = await summarizeChange(current, next, slice)
      if (change === 'no change') {
        // No version, no event; the call's audit entry still goes in this transaction (a no-op
        // PUT, which tools that re-apply configuration make on every run, was two round trips).
        return {
          next: current,
          summary: '',
          result: () => current,
          unchanged: true,
          also: () => auditWrites(current) ?? {},
        }
      }
      await slice.fresh()
      return {
        next,
        summary: (await edit.summary?.(current, next, slice)) ?? change,
        also: (stored) => {
          const extra = edit.also?.(stored!, current, watched) ?? {}
          const writes = {
            ...extra,
            events: [eventFor(ctx, 'config.firewall.updated', stored!), ...(extra.events ?? [])],
          }
          // After the change's own events: the log keeps the order it had as two transactions.
          const audit = auditWrites(current)
          return audit ? mergeWrites(writes, audit) : writes
        },
        result: (stored) => stored!,
      }
    },
    watch,
  )
  written.audit?.stored()
  return stored
}

/** `PUT /config/{fw}`: create (201) or replace. */
export async function putFirewall(
  ctx: FirewallCall,
  id: string,
  body: FirewallInput,
  ifMatch?: number,
): Promise<FirewallWrite> {
  if (body.id !== undefined && body.id !== id)
    throw invalid('id_mismatch', `body id "${body.id}" differs from the path id "${id}"`, [
      { path: 'id', message: 'must equal the path id' },
    ])
  const existing = await ctx.services.firewalls.get(ctx.ns, id)
  if (existing) {
    if (body.ecosystem !== existing.ecosystem)
      throw invalid(
        'ecosystem_immutable',
        `the ecosystem of firewall "${id}" is ${existing.ecosystem} and cannot change`,
        [{ path: 'ecosystem', message: 'cannot change' }],
      )
    const firewall = await editFirewall(ctx, id, {
      ifMatch,
      permission: async (current, next, slice) => {
        const needed = await permissionsForChange(current, next, slice)
        return needed.length ? needed : ['fw:update:config']
      },
      apply: (current) => fromInput(id, restoreRedacted(body, current).input, current),
      refuse: (current) => refuseUnrestored(restoreRedacted(body, current).unrestored),
      whole: true,
    })
    return { firewall, created: false }
  }
  requireNamespacePermission(ctx.principal, 'ns:firewalls:create')
  if (ifMatch !== undefined) checkVersion(null, ifMatch)
  return createNewFirewall(ctx, id, body)
}

/** Creates a firewall; 409 when the id is taken (the dashboard's "new firewall", which must not replace one). */
export async function createNewFirewall(ctx: FirewallCall, id: string, body: FirewallInput): Promise<FirewallWrite> {
  requireNamespacePermission(ctx.principal, 'ns:firewalls:create')
  const { input, unrestored } = restoreRedacted(body, null)
  refuseUnrestored(unrestored)
  return createFirewall(ctx, id, input, 'created')
}

/** Writes a new firewall (version 1); `source` is the firewall a clone copies. */
async function createFirewall(
  ctx: FirewallCall,
  id: string,
  input: FirewallInput,
  summary: string,
  source: Firewall | null = null,
): Promise<FirewallWrite> {
  const validation = await firewallValidationContext(
    ctx.services,
    ctx.ns,
    { id, previous: null, startsFrom: source, readable: readableBy(ctx), rules: 'all' },
    input,
  )
  await validateFirewall(input, validation)
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

export async function deleteFirewall(ctx: FirewallCall, id: string, ifMatch?: number): Promise<void> {
  await ctx.services.firewalls.mutate(ctx.ns, id, actorOfCall(ctx), nowIso(ctx), (current) => {
    if (!current) throw firewallNotFound(id)
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

/** The lists of a firewall that can be edited one item at a time, and the permission each needs. */
export const MEMBER_LISTS = {
  rules: { permission: 'fw:update:rule', noun: 'rule' },
  exceptions: { permission: 'fw:update:exception', noun: 'exception' },
} as const satisfies Record<string, { permission: FirewallPermission; noun: string }>
export type MemberList = keyof typeof MEMBER_LISTS
type MemberOf<L extends MemberList> = L extends 'rules' ? Rule : Exception

/** Creates or replaces one rule or exception (201 semantics when it is new). */
export async function upsertMember<L extends MemberList>(
  ctx: FirewallCall,
  id: string,
  list: L,
  item: MemberOf<L>,
  ifMatch?: number,
): Promise<FirewallWrite> {
  const isNew = (fw: Firewall) => !(fw[list] as { id: string }[]).some((existing) => existing.id === item.id)
  // Decided on the document the write replaces (the last `apply` is the stored attempt's), so the
  // answer and its audit entry agree with the change even when another write came in between.
  let created = false
  const firewall = await editFirewall(ctx, id, {
    permission: MEMBER_LISTS[list].permission,
    ifMatch,
    apply: (fw) => {
      created = isNew(fw)
      return { ...fw, [list]: upsertById(fw[list] as MemberOf<L>[], item) }
    },
    bodyAt: (next) => `${list}[${(next[list] as { id: string }[]).findIndex((existing) => existing.id === item.id)}]`,
    answer: (current) => (isNew(current) ? { status: 201, createdId: id } : { status: 200 }),
  })
  return { firewall, created }
}

/** Deletes one rule or exception; 404 when it is not there. */
export function deleteMember(
  ctx: FirewallCall,
  id: string,
  list: MemberList,
  itemId: string,
  ifMatch?: number,
): Promise<Firewall> {
  return editFirewall(ctx, id, {
    permission: MEMBER_LISTS[list].permission,
    ifMatch,
    apply: (fw) => {
      const items = fw[list] as { id: string }[]
      if (!items.some((item) => item.id === itemId)) throw notFound(MEMBER_LISTS[list].noun, itemId)
      return { ...fw, [list]: items.filter((item) => item.id !== itemId) }
    },
    answer: () => ({ status: 204 }),
  })
}

/** `PUT /config/{fw}/version/{v}`: a new version equal to the old configuration. */
export async function rollback(ctx: FirewallCall, id: string, version: number, ifMatch?: number): Promise<Firewall> {
  const target: FirewallVersion<Firewall, Actor> | null = await ctx.services.firewalls.getVersion(ctx.ns, id, version)
  const current = await ctx.services.firewalls.get(ctx.ns, id)
  if (!current) throw firewallNotFound(id)
  requireFirewallPermission(ctx.principal, current, 'fw:read')
  // A version from before the id was created again belongs to a deleted firewall (its grants and secrets).
  const first = await ctx.services.firewalls.firstVersion(ctx.ns, id)
  if (!target || version > current.version || version < first) throw notFound('version', String(version))
  return editFirewall(ctx, id, {
    ifMatch,
    permission: async (now, next, slice) => ['fw:update:config', ...(await permissionsForChange(now, next, slice))],
    whole: true,
    // A version saved before the pattern and depth limits existed is not brought back past them (`whole`).
    apply: (fw) => ({ ...target.config, version: fw.version, updatedAt: fw.updatedAt, ecosystem: fw.ecosystem }),
    summary: async (now, next, slice) =>
      `rolled back to version ${version} (${await summarizeChange(now, next, slice)})`,
  })
}

/** `POST /config/{fw}/clone`: a new firewall (version 1) with the source's configuration. */
export async function cloneFirewall(
  ctx: FirewallCall,
  sourceId: string,
  targetId: string,
  name?: string,
): Promise<FirewallWrite> {
  const source = await ctx.services.firewalls.get(ctx.ns, sourceId)
  if (!source) throw firewallNotFound(sourceId)
  requireFirewallPermission(ctx.principal, source, 'fw:clone')
  // Every grant of the clone is new: the cloner must hold each string on the source.
  requireMayGrant(ctx.principal, source, grantsAdded({}, source.permissions))
  const input = FirewallInput.parse({
    ...source,
    id: targetId,
    name: name ?? `${source.name} (copy)`,
    version: undefined,
    updatedAt: undefined,
  })
  return createFirewall(ctx, targetId, input, `cloned from ${sourceId} version ${source.version}`, source)
}
