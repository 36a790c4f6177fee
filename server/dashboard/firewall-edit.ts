import { putFirewall } from '../firewall/commands'
import { firewallWrite } from '../http/access'
import { getFirewall } from '../firewall/queries'
import { FirewallInput, type Firewall } from '../firewall/schema'
import type { DashboardRequest } from './handler'
import { href, html, type Html } from './html'
import type { Form } from './request'
import { invalid } from '../common/errors'

/**
 * What the firewall management forms share. Every form carries the version it was drawn from
 * and saves with it as `If-Match`, so a change made meanwhile (another tab, the API) is a 412
 * shown on the form instead of being overwritten.
 */

export const fwPath = (ns: string, fw: string, ...rest: (string | number)[]) =>
  href('namespaces', ns, 'firewalls', fw, ...rest)

export const firewallCrumbs = (ns: string, fw: Pick<Firewall, 'id' | 'name'>): [string, string][] => [
  ['Firewalls', href('namespaces', ns, 'firewalls')],
  [fw.name, fwPath(ns, fw.id)],
]

/** The hidden field holding the version the form shows. */
export const versionField = (version: number): Html => html`<input type="hidden" name="version" value="${version}" />`

/** The version a form was drawn from, when it sent a sensible one (to draw the form again). */
export function formVersion(form: Form, field = 'version'): number | undefined {
  const raw = form.get(field)
  const version = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw)
  return Number.isSafeInteger(version) && version > 0 ? version : undefined
}

/**
 * The version a form that changes a firewall was drawn from, which it saves with as `If-Match`.
 * A post without one is refused (400 `version_required`) rather than saved unchecked over
 * whatever the firewall holds now; a stale one is the domain's 412.
 */
export function expectedVersion(form: Form, field = 'version'): number {
  return requireVersion(formVersion(form, field))
}

/** `version`, or 400 `version_required` when the form sent none (call it after the access check). */
export function requireVersion(version: number | undefined): number {
  if (version === undefined)
    throw invalid(
      'version_required',
      'the form did not say which version of the firewall it was drawn from; reload the page and try again',
    )
  return version
}

/**
 * A whole-configuration change through the API's own `PUT` operation (`putFirewall`): the
 * redacted configuration the viewer can read, changed by `change`, saved with `If-Match`
 * `version` (the form's; none is 400 `version_required`). The
 * `[REDACTED]` placeholders left in it keep the stored credentials, exactly as for an API
 * client that PUTs back what it read; the domain decides which permissions the change needs.
 */
export async function replaceConfig(
  req: DashboardRequest,
  id: string,
  version: number | undefined,
  change: (input: FirewallInput, current: Firewall) => unknown,
): Promise<Firewall> {
  // The API's own check for PUT: any edit permission here; the domain asks for the ones the change needs.
  await firewallWrite(req.ctx, { fw: id })
  const ifMatch = requireVersion(version)
  const current = await getFirewall(req.ctx, id)
  const next = FirewallInput.parse(change(FirewallInput.parse(current), current))
  const { firewall } = await putFirewall(req.ctx, id, next, ifMatch)
  return firewall
}

/** `a, b` or newline-separated ids of a text field. */
export const idList = (value: string | undefined): string[] => (value ?? '').split(/[\s,]+/).filter(Boolean)

/** `items[3].field...` -> `field...` when 3 is `index` (errors about the item the form edits). */
export function itemField(path: string, list: string, index: number): string | undefined {
  const match = new RegExp(`^${list}\\[(\\d+)\\]\\.?(.*)$`).exec(path)
  if (!match || Number(match[1]) !== index) return undefined
  return match[2] || undefined
}
