import type { FirewallRepository } from '../../storage/repositories/firewalls'
import type { Firewall } from '../firewall/schema'
import type { Actor } from '../events/schemas'
import type { NamespaceRepository } from '../../storage/repositories/namespaces'
import type { Ecosystem } from '../firewall/schema'

/**
 * The ecosystems of every live firewall of every namespace: the feeds worth downloading.
 * @example await ecosystemsInUse(services.namespaces, services.firewalls) // Set { 'npm', 'pypi' }
 */
export async function ecosystemsInUse(
  namespaces: NamespaceRepository,
  firewalls: FirewallRepository<Firewall, Actor>,
): Promise<Set<Ecosystem>> {
  const found = new Set<Ecosystem>()
  for (const ns of await namespaces.ids()) {
    for (const firewall of await firewalls.list(ns)) found.add(firewall.ecosystem)
  }
  return found
}
