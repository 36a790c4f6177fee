import type { Firewall } from './schema'

/**
 * The firewall a call's access check read, handed once to the same call's read of it (#27): a
 * `GET /config/{fw}` checks `fw:read` on the firewall and then answers it, and each read costs a
 * storage round trip for the namespace's write stamp. Handed over once, so any later read in the
 * call goes to storage again; keyed by the call object, so nothing outlives the call.
 */
const checked = new WeakMap<object, Map<string, Firewall | null>>()

/** Notes what the access check of `call` read for firewall `id`. */
export function noteCheckedFirewall(call: object, id: string, firewall: Firewall | null): void {
  let reads = checked.get(call)
  if (!reads) checked.set(call, (reads = new Map()))
  reads.set(id, firewall)
}

/**
 * What the access check of `call` read for `id` (then forgotten), or undefined when it read nothing.
 * @example takeCheckedFirewall(ctx, 'web') ?? (await ctx.services.firewalls.get(ctx.ns, 'web'))
 */
export function takeCheckedFirewall(call: object, id: string): Firewall | null | undefined {
  const reads = checked.get(call)
  if (!reads?.has(id)) return undefined
  const firewall = reads.get(id)!
  reads.delete(id)
  return firewall
}
