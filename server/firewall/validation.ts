import { invalid, type FieldError } from '../common/errors'
import type { FirewallPorts } from './ports'
import type { UpstreamAddressSettings } from '../net/address-policy'
import type { Firewall, FirewallInput, Rule } from './schema'
import { chainOf, reaches } from './extends-chain'
import { patternLimitProblems } from './rules/pattern-limits'
import { refuseDeepSelector } from './rules/selector-depth'
import { collectLicenseSetIds, validateRuleForEcosystem } from './rules/validate'
import { refuseRefusedEndpoints } from './upstream-addresses'
import { TimeSlice } from '../common/time-slice'

/**
 * What a firewall about to be written is judged against, read before the write's transaction (what
 * the configuration met inside it names and the expected one did not: once, there).
 */
export interface FirewallValidationContext {
  /** The id the configuration is written under. */
  id: string
  /** The stored document this write replaces; null for a new firewall (create, clone). */
  previous: Firewall | null
  /**
   * The configuration the write starts from: `previous`, or the source of a clone. What the write
   * keeps of it unchanged is not judged again (an exception whose rule was deleted since, a base
   * named by its owner; with `rules: 'changed'`, a rule stored before a limit existed), so such
   * data never locks a firewall.
   */
  startsFrom: Firewall | null
  /**
   * Which rules the limits apply to: `all` for a whole configuration (PUT, rollback, create, clone:
   * a version saved before the limits existed is not brought back past them), `changed` for a
   * partial edit (a rule or exception upsert or delete, an approval).
   */
  rules: 'all' | 'changed'
  /**
   * The namespace's license set ids and firewalls, or how to read them (once): only a configuration
   * that names a license set, or a base, needs them, and a rule upsert on a firewall that names
   * neither was reading both (#27: two round trips, and every firewall of the namespace parsed).
   */
  licenseSetIds: Lazy<ReadonlySet<string>>
  firewalls: Lazy<ReadonlyMap<string, Firewall>>
  /** Whether the caller may read a firewall: a base it cannot read is as unknown as a missing one. */
  readable: (firewall: Firewall) => boolean
  upstreamAddresses: UpstreamAddressSettings
  /**
   * Where the body the caller sent sits in the firewall (`rules[3]` for a rule upsert): limits
   * broken inside it are reported relative to the body, as the edge reports schema errors.
   */
  bodyAt?: string
}

/** A value, or its read (memoised by whoever builds it). */
type Lazy<T> = T | (() => Promise<T>)

const valueOf = <T>(lazy: Lazy<T>): T | Promise<T> => (typeof lazy === 'function' ? (lazy as () => Promise<T>)() : lazy)

/** What `validateFirewall` reads of a configuration. */
export type FirewallConfig = Pick<FirewallInput, 'ecosystem' | 'upstreams' | 'rules' | 'exceptions' | 'extends'>

/** Does `config` name a license set (in any rule) or a base: what decides the reads of the context. */
function namesLicenseSets(config: FirewallConfig): boolean {
  return config.rules.some((rule) => collectLicenseSetIds(rule.selector).length > 0)
}

/**
 * What `validateFirewall` needs (license sets, the namespace's firewalls), read before the write's
 * transaction when `expected` (the configuration the write is expected to make) names them, so the
 * check itself runs inside it without a round trip; read there, once, only when the configuration
 * met in the transaction names them and `expected` did not.
 */
export async function firewallValidationContext(
  services: Pick<FirewallPorts, 'licenseSets' | 'firewalls' | 'config'>,
  ns: string,
  context: Pick<FirewallValidationContext, 'id' | 'previous' | 'readable' | 'bodyAt' | 'rules'> & {
    startsFrom?: Firewall | null
  },
  expected?: FirewallConfig,
): Promise<FirewallValidationContext> {
  let sets: Promise<ReadonlySet<string>> | undefined
  let firewalls: Promise<ReadonlyMap<string, Firewall>> | undefined
  const licenseSetIds = () =>
    (sets ??= services
      .licenseSets(ns)
      .all()
      .then((all) => new Set(all.map((set) => set.id))))
  const namespaceFirewalls = () =>
    (firewalls ??= services.firewalls.list(ns).then((all) => new Map(all.map((fw) => [fw.id, fw]))))
  await Promise.all([
    !expected || namesLicenseSets(expected) ? licenseSetIds() : undefined,
    !expected || expected.extends.length > 0 ? namespaceFirewalls() : undefined,
  ])
  return {
    ...context,
    startsFrom: context.startsFrom ?? context.previous,
    licenseSetIds,
    firewalls: namespaceFirewalls,
    upstreamAddresses: services.config.upstreamAddresses,
  }
}

const describe = (errors: FieldError[]) => errors.map((e) => `${e.path}: ${e.message}`).join('; ')

/** The rules of `next` that the write brings in or changes, with their index. */
async function judgedRules(
  next: FirewallConfig,
  context: FirewallValidationContext,
  slice: TimeSlice,
): Promise<[Rule, number][]> {
  const kept = new Set<string>()
  if (context.rules === 'changed')
    for (const rule of context.startsFrom?.rules ?? []) {
      kept.add(JSON.stringify(rule))
      if (slice.spent()) await slice.pause()
    }
  const judged: [Rule, number][] = []
  for (const [index, rule] of next.rules.entries()) {
    if (kept.size === 0 || !kept.has(JSON.stringify(rule))) judged.push([rule, index])
    if (slice.spent()) await slice.pause()
  }
  return judged
}

/** `rules[3].selector...` -> `selector...` when the body sent is `rules[3]`. */
function relativeTo(bodyAt: string | undefined, path: string): string {
  if (bodyAt && path.startsWith(`${bodyAt}.`)) return path.slice(bodyAt.length + 1)
  return path
}

/** Selector depth and package-name pattern limits of the rules the write brings in (CONTRACT section 8). */
async function refuseOverLimits(
  next: FirewallConfig,
  context: FirewallValidationContext,
  slice: TimeSlice,
): Promise<void> {
  const rules = await judgedRules(next, context, slice)
  for (const [rule, index] of rules) {
    refuseDeepSelector(rule.selector, `rules[${index}].selector`)
    if (slice.spent()) await slice.pause()
  }
  const errors: FieldError[] = []
  for (const [rule, index] of rules) {
    for (const { path, message } of patternLimitProblems(rule))
      errors.push({ path: relativeTo(context.bodyAt, fieldPath(['rules', index, ...path])), message })
    if (slice.spent()) await slice.pause()
  }
  if (errors.length) throw invalid('validation_failed', describe(errors), errors)
}

/**
 * What a configuration refers to outside itself: license sets exist; every rule's selector can
 * apply to the firewall's ecosystem (errors only; warnings do not refuse); `extends` names existing
 * firewalls of the same ecosystem without a cycle; exceptions name rules the firewall (or a base)
 * has. A new base the caller cannot read is answered exactly like a missing one, so `extends`
 * neither reveals nor borrows another team's firewall.
 */
async function refuseUnknownReferences(
  next: FirewallConfig,
  context: FirewallValidationContext,
  slice: TimeSlice,
): Promise<void> {
  const { id } = context
  const errors: FieldError[] = []
  // Read when first needed: a configuration without license rules or bases reads neither.
  let licenseSetIds: ReadonlySet<string> | undefined
  for (const [index, rule] of next.rules.entries()) {
    for (const setId of collectLicenseSetIds(rule.selector)) {
      licenseSetIds ??= await valueOf(context.licenseSetIds)
      if (!licenseSetIds.has(setId))
        errors.push({ path: `rules[${index}].selector`, message: `unknown license set "${setId}"` })
    }
    for (const problem of validateRuleForEcosystem(rule, next.ecosystem)) {
      if (problem.level === 'error')
        errors.push({
          path: `rules[${index}].${problem.path}`,
          message: `${problem.message} (firewall ecosystem ${next.ecosystem})`,
        })
    }
    if (slice.spent()) await slice.pause()
  }
  const all = next.extends.length > 0 ? await valueOf(context.firewalls) : new Map<string, Firewall>()
  const map = all as Map<string, Firewall>
  const inheritedRuleIds = new Set<string>()
  const keptBases = new Set(context.startsFrom?.extends ?? [])
  for (const [index, baseId] of next.extends.entries()) {
    const found = all.get(baseId)
    // Only a newly named base is judged by the caller's rights, so an edit never trips over one an owner set.
    const base = found && (keptBases.has(baseId) || context.readable(found)) ? found : undefined
    if (baseId === id) errors.push({ path: `extends[${index}]`, message: 'a firewall cannot extend itself' })
    else if (!base) errors.push({ path: `extends[${index}]`, message: `unknown firewall "${baseId}"` })
    else if (base.ecosystem !== next.ecosystem)
      errors.push({
        path: `extends[${index}]`,
        message: `firewall "${baseId}" is ${base.ecosystem}, not ${next.ecosystem}`,
      })
    else if (reaches(map, baseId, id))
      errors.push({ path: `extends[${index}]`, message: `extending "${baseId}" would make a cycle` })
    for (const fw of chainOf(map, baseId)) fw.rules.forEach((rule) => inheritedRuleIds.add(rule.id))
    if (slice.spent()) await slice.pause()
  }
  const ownRuleIds = new Set(next.rules.map((rule) => rule.id))
  // Only new or changed exceptions are checked, so deleting a rule never locks the config.
  const unchanged = new Set<string>()
  for (const exception of context.startsFrom?.exceptions ?? []) {
    unchanged.add(JSON.stringify(exception))
    if (slice.spent()) await slice.pause()
  }
  for (const [index, exception] of next.exceptions.entries()) {
    if (
      !unchanged.has(JSON.stringify(exception)) &&
      !ownRuleIds.has(exception.rule) &&
      !inheritedRuleIds.has(exception.rule)
    )
      errors.push({ path: `exceptions[${index}].rule`, message: `unknown rule "${exception.rule}"` })
    if (slice.spent()) await slice.pause()
  }
  if (errors.length) throw invalid('invalid_reference', describe(errors), errors)
}

/**
 * The one check every write of a firewall passes (PUT, rule and exception upserts and deletes,
 * rollback, clone, exception approval, the dashboard forms, which call the same commands), after
 * the zod schema has checked the body's shape at the edge and the caller's permissions were
 * checked. Pure: `context` is read beforehand (`firewallValidationContext`), so it runs inside the
 * write's transaction, against the document it replaces. A whole configuration is up to 1 MiB of
 * outside input (9,000 rules and more): the checks go rule by rule and take turns with the rest of
 * the process on `slice` (CONTRACT.md 8). Rejects with a 400 `DomainError`, in this order:
 * - `selector_too_deep`: a selector nested past 16 (the edge refuses deeper bodies before zod
 *   recurses; this catches stored versions, e.g. a rollback);
 * - `validation_failed`: over 1,000 package-name patterns in one rule, or one over 214 characters;
 * - `invalid_reference`: unknown license sets, rules the ecosystem cannot evaluate, unknown, foreign
 *   or cyclic bases, exceptions of unknown rules;
 * - `upstream_endpoint_userinfo` / `upstream_address_refused`: endpoints the address policy refuses.
 * @example await validateFirewall(next, await firewallValidationContext(services, ns, { id, previous, readable, rules: 'all' }))
 */
export async function validateFirewall(
  next: FirewallConfig,
  context: FirewallValidationContext,
  slice = new TimeSlice(),
): Promise<void> {
  await refuseOverLimits(next, context, slice)
  await refuseUnknownReferences(next, context, slice)
  refuseRefusedEndpoints(context.upstreamAddresses, next.upstreams, context.previous?.upstreams)
}

// The same `rules[0].selector.function.patterns[3]` form as zod errors (http/problem.ts fieldErrors).
function fieldPath(path: (string | number)[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === 'number') return `${acc}[${part}]`
    return acc ? `${acc}.${part}` : part
  }, '')
}
