import type { NamespaceCall } from './ports'
import type { z } from 'zod'
import { conflict, invalid, notFound } from '../common/errors'
import { newId } from '../common/ids'
import { requireNamespacePermission } from '../auth/permissions'
import { nowIso } from '../auth/call-context'
import { collectLicenseSetIds } from '../firewall/rules/validate'
import type { LicenseSet, LicenseSetInput } from './schema'

type LicenseSetBody = z.infer<typeof LicenseSetInput>

const publicSet = ({ id, name, licenses, createdAt, updatedAt }: LicenseSet) => ({
  id,
  name,
  licenses,
  createdAt,
  updatedAt,
})

export async function listLicenseSets(ctx: NamespaceCall) {
  return (await ctx.services.licenseSets(ctx.ns).all())
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map(publicSet)
}

export async function getLicenseSet(ctx: NamespaceCall, id: string) {
  const set = await ctx.services.licenseSets(ctx.ns).find(id)
  if (!set) throw notFound('license set', id)
  return publicSet(set)
}

export async function createLicenseSet(ctx: NamespaceCall, body: LicenseSetBody) {
  requireNamespacePermission(ctx.principal, 'ns:license-sets:manage')
  const id = body.id ?? newId('ls', ctx.services.clock.now())
  const now = nowIso(ctx)
  return ctx.services.licenseSets(ctx.ns).update((items) => {
    if (items.has(id)) throw conflict('license_set_exists', `license set "${id}" already exists`)
    const set: LicenseSet = {
      id,
      name: body.name,
      licenses: [...new Set(body.licenses)],
      createdAt: now,
      updatedAt: now,
    }
    return { items: items.set(id, set), result: publicSet(set) }
  })
}

export async function updateLicenseSet(ctx: NamespaceCall, id: string, body: LicenseSetBody) {
  requireNamespacePermission(ctx.principal, 'ns:license-sets:manage')
  if (body.id !== undefined && body.id !== id)
    throw invalid('id_mismatch', `body id "${body.id}" differs from the path id "${id}"`, [
      { path: 'id', message: 'must equal the path id' },
    ])
  return ctx.services.licenseSets(ctx.ns).update((items) => {
    const set = items.get(id)
    if (!set) throw notFound('license set', id)
    const next = { ...set, name: body.name, licenses: [...new Set(body.licenses)], updatedAt: nowIso(ctx) }
    return { items: items.set(id, next), result: publicSet(next) }
  })
}

/** A license set still named by a rule cannot be deleted (the rule would silently change meaning). */
export async function deleteLicenseSet(ctx: NamespaceCall, id: string) {
  requireNamespacePermission(ctx.principal, 'ns:license-sets:manage')
  const users = (await ctx.services.firewalls.list(ctx.ns)).filter((fw) =>
    fw.rules.some((rule) => collectLicenseSetIds(rule.selector).includes(id)),
  )
  if (users.length)
    throw conflict(
      'license_set_in_use',
      `license set "${id}" is used by firewall ${users.map((fw) => `"${fw.id}"`).join(', ')}`,
    )
  await ctx.services.licenseSets(ctx.ns).update((items) => {
    if (!items.delete(id)) throw notFound('license set', id)
    return { items, result: undefined }
  })
}
