import type { FirewallCall } from './ports'
import { noteCheckedFirewall, takeCheckedFirewall } from './call-read'
import { notFound, firewallNotFound } from '../common/errors'
import { canOnFirewall, requireFirewallPermission } from '../auth/permissions'
import { redactFirewall } from './redact'
import type { Firewall } from './schema'
import { stringifyCooperatively } from '../common/cooperative-json'
import { TimeSlice } from '../common/time-slice'

/** Firewalls the caller can read (`fw:read`), redacted. */
export async function listFirewalls(ctx: FirewallCall): Promise<Firewall[]> {
  const all = await ctx.services.firewalls.list(ctx.ns)
  return all.filter((fw) => canOnFirewall(ctx.principal, fw, 'fw:read')).map(redactFirewall)
}

/** Whether the caller reads (`fw:read`) at least one firewall of the namespace. */
export async function readsAnyFirewall(ctx: FirewallCall): Promise<boolean> {
  return (await ctx.services.firewalls.list(ctx.ns)).some((fw) => canOnFirewall(ctx.principal, fw, 'fw:read'))
}

/** Firewalls the caller may use as a registry (`fw:access`): what a token page offers snippets for. */
export async function accessibleFirewalls(ctx: FirewallCall): Promise<Pick<Firewall, 'id' | 'name' | 'ecosystem'>[]> {
  const all = await ctx.services.firewalls.list(ctx.ns)
  return all
    .filter((fw) => canOnFirewall(ctx.principal, fw, 'fw:access'))
    .map(({ id, name, ecosystem }) => ({ id, name, ecosystem }))
}

// Redacted JSON per stored document; the repository hands out the same cached objects
// until a firewall changes, so this is computed once per version.
const redactedJson = new WeakMap<Firewall, string>()

/**
 * A firewall is up to 1 MiB of outside input: its JSON is written in turns (common/cooperative-json.ts;
 * `JSON.stringify` of 47,500 principals held the loop 10-20 ms), the same text.
 */
async function jsonOf(firewall: Firewall, slice: TimeSlice): Promise<string> {
  let json = redactedJson.get(firewall)
  if (json === undefined) {
    json = (await stringifyCooperatively(redactFirewall(firewall), slice)).pieces.join('')
    redactedJson.set(firewall, json)
  }
  return json
}

/** Encoded list bodies per (firewall list, caller's grants): `GET /config` is the hottest read. */
const listBodies = new WeakMap<readonly Firewall[], Map<string, Buffer>>()

/**
 * The same list as encoded JSON. Cached per cached firewall list (which changes with every
 * write) and per permission signature of the caller, so a repeated list costs no filtering,
 * serialising or encoding.
 */
export function listFirewallsBody(ctx: FirewallCall): Buffer | Promise<Buffer> {
  // In the same turn when the list and its body for this caller are kept (#27: no promise per call).
  const kept = ctx.services.firewalls.listKept(ctx.ns)
  const body = kept && listBodies.get(kept)?.get(permissionSignature(ctx.principal))
  return body ?? buildListBody(ctx)
}

const permissionSignature = (principal: FirewallCall['principal']) =>
  `${principal.owner}|${principal.id}|${principal.teams.join(',')}|${principal.grants.join(',')}`

async function buildListBody(ctx: FirewallCall): Promise<Buffer> {
  const all = await ctx.services.firewalls.list(ctx.ns)
  const { principal } = ctx
  const signature = permissionSignature(principal)
  let bodies = listBodies.get(all)
  if (!bodies) listBodies.set(all, (bodies = new Map()))
  let body = bodies.get(signature)
  if (!body) {
    const slice = new TimeSlice()
    const parts: string[] = []
    for (const fw of all) if (canOnFirewall(principal, fw, 'fw:read')) parts.push(await jsonOf(fw, slice))
    body = Buffer.from(`[${parts.join(',')}]`)
    if (bodies.size > 1000) bodies.clear()
    bodies.set(signature, body)
  }
  return body
}

/** The stored firewall after checking `permission` (404 when the caller cannot see it). */
async function loadFirewall(
  ctx: FirewallCall,
  id: string,
  permission: Parameters<typeof requireFirewallPermission>[2] = 'fw:read',
): Promise<Firewall> {
  // The version the call's access check read, when it did: both parts of the call see one version.
  const checked = takeCheckedFirewall(ctx, id)
  const firewall = checked !== undefined ? checked : await ctx.services.firewalls.get(ctx.ns, id)
  if (!firewall) throw firewallNotFound(id)
  requireFirewallPermission(ctx.principal, firewall, permission)
  return firewall
}

export async function getFirewall(ctx: FirewallCall, id: string): Promise<Firewall> {
  return redactFirewall(await loadFirewall(ctx, id))
}

/**
 * `GET /config/{fw}` as JSON text, reusing the cached redacted JSON of that version: in the same
 * turn when the call's access check read the firewall and its JSON is cached (#27).
 */
export function getFirewallJson(
  ctx: FirewallCall,
  id: string,
): { json: string; version: number } | Promise<{ json: string; version: number }> {
  const checked = takeCheckedFirewall(ctx, id)
  const json = checked ? redactedJson.get(checked) : undefined
  if (checked && json !== undefined) {
    requireFirewallPermission(ctx.principal, checked, 'fw:read')
    return { json, version: checked.version }
  }
  // Handed back, so that the read below answers the same version the access check saw.
  if (checked !== undefined) noteCheckedFirewall(ctx, id, checked)
  return loadFirewall(ctx, id).then(async (firewall) => ({
    json: await jsonOf(firewall, new TimeSlice()),
    version: firewall.version,
  }))
}

export async function firewallHistory(ctx: FirewallCall, id: string, limit: number, beforeVersion?: number) {
  const firewall = await loadFirewall(ctx, id)
  const [entries, first] = await Promise.all([
    ctx.services.firewalls.history(ctx.ns, id, firewall.version, limit, beforeVersion),
    ctx.services.firewalls.firstVersion(ctx.ns, id),
  ])
  // Versions of a deleted firewall of the same id are not this firewall's history.
  return entries
    .filter((entry) => entry.version >= first)
    .map(({ version, updatedAt, actor, summary }) => ({ version, updatedAt, actor, summary }))
}

export async function firewallVersion(ctx: FirewallCall, id: string, version: number): Promise<Firewall> {
  const firewall = await loadFirewall(ctx, id)
  const first = await ctx.services.firewalls.firstVersion(ctx.ns, id)
  const ofThisLife = version >= first && version <= firewall.version
  const entry = ofThisLife ? await ctx.services.firewalls.getVersion(ctx.ns, id, version) : null
  if (!entry) throw notFound('version', String(version))
  return redactFirewall(entry.config)
}
