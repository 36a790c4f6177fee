import type { FirewallPorts } from './ports'
import { invalid, type FieldError } from '../common/errors'
import type { Firewall, FirewallInput, Selector } from './schema'
import { validateRuleForEcosystem } from './rules/validate'

/** License set ids a selector refers to (walking all/any/not). */
export function licenseSetsOf(selector: Selector): string[] {
  const fn = selector.function
  switch (fn.name) {
    case 'license':
      return [fn.licenseSet]
    case 'all':
    case 'any':
      return fn.selectors.flatMap(licenseSetsOf)
    case 'not':
      return licenseSetsOf(fn.selector)
    default:
      return []
  }
}

/**
 * Checks what a configuration refers to outside itself: license sets exist; every rule's
 * selector can apply to the firewall's ecosystem (errors only; warnings do not refuse);
 * `extends` names existing firewalls of the same ecosystem without a cycle; exceptions name
 * rules the firewall (or a base) has. A new base the caller cannot read is answered exactly like a
 * missing one, so `extends` neither reveals nor borrows another team's firewall.
 */
export async function validateReferences(
  services: FirewallPorts,
  ns: string,
  id: string,
  config: Pick<FirewallInput, 'rules' | 'exceptions' | 'extends' | 'ecosystem'>,
  previous: Firewall | null = null,
  /** Whether the caller may read a firewall: a base it cannot read is as unknown as a missing one. */
  readable: (firewall: Firewall) => boolean = () => true,
): Promise<void> {
  const errors: FieldError[] = []
  const licenseSetIds = new Set((await services.licenseSets(ns).all()).map((set) => set.id))
  config.rules.forEach((rule, index) => {
    for (const setId of licenseSetsOf(rule.selector)) {
      if (!licenseSetIds.has(setId))
        errors.push({ path: `rules[${index}].selector`, message: `unknown license set "${setId}"` })
    }
    for (const problem of validateRuleForEcosystem(rule, config.ecosystem)) {
      if (problem.level === 'error')
        errors.push({
          path: `rules[${index}].${problem.path}`,
          message: `${problem.message} (firewall ecosystem ${config.ecosystem})`,
        })
    }
  })
  const all = new Map((await services.firewalls.list(ns)).map((fw) => [fw.id, fw]))
  const inheritedRuleIds = new Set<string>()
  const keptBases = new Set(previous?.extends ?? [])
  config.extends.forEach((baseId, index) => {
    const found = all.get(baseId)
    // Only a newly named base is judged by the caller's rights, so an edit never trips over one an owner set.
    const base = found && (keptBases.has(baseId) || readable(found)) ? found : undefined
    if (baseId === id) errors.push({ path: `extends[${index}]`, message: 'a firewall cannot extend itself' })
    else if (!base) errors.push({ path: `extends[${index}]`, message: `unknown firewall "${baseId}"` })
    else if (base.ecosystem !== config.ecosystem)
      errors.push({
        path: `extends[${index}]`,
        message: `firewall "${baseId}" is ${base.ecosystem}, not ${config.ecosystem}`,
      })
    else if (reaches(all, baseId, id))
      errors.push({ path: `extends[${index}]`, message: `extending "${baseId}" would make a cycle` })
    for (const fw of chainOf(all, baseId)) fw.rules.forEach((rule) => inheritedRuleIds.add(rule.id))
  })
  const ownRuleIds = new Set(config.rules.map((rule) => rule.id))
  // Only new or changed exceptions are checked, so deleting a rule never locks the config.
  const unchanged = new Set((previous?.exceptions ?? []).map((exception) => JSON.stringify(exception)))
  config.exceptions.forEach((exception, index) => {
    if (unchanged.has(JSON.stringify(exception))) return
    if (!ownRuleIds.has(exception.rule) && !inheritedRuleIds.has(exception.rule)) {
      errors.push({ path: `exceptions[${index}].rule`, message: `unknown rule "${exception.rule}"` })
    }
  })
  if (errors.length) throw invalid('invalid_reference', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors)
}

/** Does `from` (through its extends) reach `target`? */
function reaches(all: Map<string, Firewall>, from: string, target: string, seen = new Set<string>()): boolean {
  if (from === target) return true
  if (seen.has(from)) return false
  seen.add(from)
  return (all.get(from)?.extends ?? []).some((next) => reaches(all, next, target, seen))
}

/** A firewall and its bases, depth-first, each once. */
export function chainOf(all: Map<string, Firewall>, id: string, seen = new Set<string>()): Firewall[] {
  const fw = all.get(id)
  if (!fw || seen.has(id)) return []
  seen.add(id)
  return [fw, ...fw.extends.flatMap((baseId) => chainOf(all, baseId, seen))]
}
