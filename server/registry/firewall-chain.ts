import type { RegistryPorts } from './ports'
import type { AdvisoryLookup } from '../advisories/lookup'
import type { FirewallLayer } from '../firewall/rules/evaluate'
import type { EvaluationContext } from '../firewall/rules/types'
import type { Firewall } from '../firewall/schema'
import { chainReadsLicenseSets } from '../firewall/rules/reads-license-sets'

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

/**
 * The pure engine's inputs besides rules: time, the namespace's license sets, advisories. The
 * license sets are read only when a rule of `chain` reads them (no read on most requests).
 */
export async function evaluationContext(
  services: Pick<RegistryPorts, 'clock' | 'firewalls' | 'licenseSets'>,
  ns: string,
  advisories: AdvisoryLookup,
  chain: readonly FirewallLayer[],
): Promise<EvaluationContext> {
  const sets = chainReadsLicenseSets(chain) ? await services.licenseSets(ns).all() : []
  return {
    now: services.clock.now(),
    licenseSets: new Map(sets.map((set) => [set.id, set.licenses])),
    advisories,
  }
}

/**
 * A request's chain and evaluation context: the chain first, which says whether the context
 * needs the license sets.
 * @example const [chain, ctx] = await chainAndContext(request)
 */
export async function chainAndContext(request: {
  services: Pick<RegistryPorts, 'clock' | 'firewalls' | 'licenseSets'>
  ns: string
  firewall: Firewall
  advisories: AdvisoryLookup
}): Promise<[FirewallLayer[], EvaluationContext]> {
  const chain = await firewallChain(request.services, request.ns, request.firewall)
  return [chain, await evaluationContext(request.services, request.ns, request.advisories, chain)]
}
