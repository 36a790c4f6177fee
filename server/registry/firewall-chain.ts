import type { RegistryPorts } from './ports'
import type { AdvisoryLookup } from '../advisories/lookup'
import type { FirewallLayer } from '../firewall/rules/evaluate'
import type { EvaluationContext } from '../firewall/rules/types'
import type { Firewall } from '../firewall/schema'

/**
 * The inheritance chain a decision evaluates: the firewall itself first, then its `extends`
 * bases depth-first (each with `inheritedFrom` = its id and current version). Cycles, missing
 * bases and bases of another ecosystem are skipped rather than failing the request.
 * @example evaluate(await firewallChain(services, ns, fw), ['download'], facts, ctx)
 */
export async function firewallChain(
  services: Pick<RegistryPorts, 'clock' | 'firewalls' | 'licenseSets'>,
  ns: string,
  firewall: Firewall,
): Promise<FirewallLayer[]> {
  const layers: FirewallLayer[] = [{ firewall }]
  if (firewall.extends.length === 0) return layers
  const seen = new Set([firewall.id])
  const visit = async (current: Firewall): Promise<void> => {
    for (const baseId of current.extends) {
      if (seen.has(baseId)) continue
      seen.add(baseId)
      const base = await services.firewalls.get(ns, baseId)
      if (!base || base.ecosystem !== firewall.ecosystem) continue
      layers.push({ firewall: base, inheritedFrom: { id: base.id, version: base.version } })
      await visit(base)
    }
  }
  await visit(firewall)
  return layers
}

/** The pure engine's inputs besides rules: time, the namespace's license sets, advisories. */
export async function evaluationContext(
  services: Pick<RegistryPorts, 'clock' | 'firewalls' | 'licenseSets'>,
  ns: string,
  advisories: AdvisoryLookup,
): Promise<EvaluationContext> {
  const sets = await services.licenseSets(ns).all()
  return {
    now: services.clock.now(),
    licenseSets: new Map(sets.map((set) => [set.id, set.licenses])),
    advisories,
  }
}
