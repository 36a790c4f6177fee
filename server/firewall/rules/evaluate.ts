import type { ExecutionPhase, Exception, Firewall, Rule } from '../schema'
import { exceptionApplies } from './exceptions'
import { matchSelector } from './selectors'
import type { EvaluationContext, PackageVersionFacts } from './types'

export { validateRuleForEcosystem, collectLicenseSetIds } from './validate'

/**
 * One firewall of an inheritance chain. The deciding firewall comes first without
 * `inheritedFrom`; each base (resolved by the caller, depth-first, cycles removed) carries the
 * id and config version events should name as its source.
 */
export interface FirewallLayer {
  firewall: Firewall
  inheritedFrom?: { id: string; version: number }
}

/** A rule whose selector matched, with where it came from. */
export interface MatchedRule {
  id: string
  description: string
  executionPhase: ExecutionPhase
  block: boolean
  log: boolean
  /** Inherited rules only: the firewall the rule was defined in (`source` = `sourceFirewall`). */
  source?: string
  sourceFirewall?: string
  sourceFirewallVersion?: number
  output?: Record<string, unknown>
  message?: string
}

/** The exception that let a blocking rule's match through. */
export interface MatchedException {
  id: string
  rule: string
  log: boolean
  reason?: string
  expires?: string
  /** Inherited exceptions only. */
  exceptionSourceFirewall?: string
  exceptionSourceFirewallVersion?: number
}

export type DecisionOutcome = 'allowed' | 'blocked' | 'exception-allowed' | 'logged'

/** A decision as data; the caller turns it into a response and an event. */
export interface Decision {
  outcome: DecisionOutcome
  /** Deciding firewall and the config version evaluated. */
  firewall: string
  firewallVersion: number
  /** The rule that decided: the block, the excepted block, or the logging rule. */
  rule?: MatchedRule
  exception?: MatchedException
  /** Every rule that matched, in chain order (excepted ones included). */
  matches: MatchedRule[]
  output?: Record<string, unknown>
  /** Rule description, else the selector's message; 'no rule matched' when allowed. */
  message: string
}

interface SourcedException {
  exception: Exception
  inheritedFrom?: FirewallLayer['inheritedFrom']
}

function toMatchedRule(
  rule: Rule,
  layer: FirewallLayer,
  output?: Record<string, unknown>,
  message?: string,
): MatchedRule {
  return {
    id: rule.id,
    description: rule.description,
    executionPhase: rule.executionPhase,
    block: rule.ruleEffect.block,
    log: rule.ruleEffect.log,
    ...(layer.inheritedFrom
      ? {
          source: layer.inheritedFrom.id,
          sourceFirewall: layer.inheritedFrom.id,
          sourceFirewallVersion: layer.inheritedFrom.version,
        }
      : {}),
    ...(output ? { output } : {}),
    ...(message ? { message } : {}),
  }
}

function toMatchedException({ exception, inheritedFrom }: SourcedException): MatchedException {
  return {
    id: exception.id,
    rule: exception.rule,
    log: exception.log,
    ...(exception.reason ? { reason: exception.reason } : {}),
    ...(exception.expires ? { expires: exception.expires } : {}),
    ...(inheritedFrom
      ? { exceptionSourceFirewall: inheritedFrom.id, exceptionSourceFirewallVersion: inheritedFrom.version }
      : {}),
  }
}

function messageOf(rule: MatchedRule): string {
  return rule.description || rule.message || `matched rule ${rule.id}`
}

function decided(base: Omit<Decision, 'outcome' | 'message'>, outcome: DecisionOutcome, rule: MatchedRule): Decision {
  return { ...base, outcome, rule, ...(rule.output ? { output: rule.output } : {}), message: messageOf(rule) }
}

/**
 * Decides one package version against a firewall chain for the given phases. Pure: no clock,
 * no I/O. Outcome precedence: first unexcepted blocking match => 'blocked'; else first excepted
 * blocking match => 'exception-allowed'; else first unexcepted logging match => 'logged'; else
 * 'allowed'. Exceptions of any layer can except rules of any layer (they key on rule id).
 * @example evaluate([{ firewall }], ['download', 'versions'], facts, ctx).outcome
 */
export function evaluate(
  chain: readonly FirewallLayer[],
  phases: readonly ExecutionPhase[],
  facts: PackageVersionFacts,
  ctx: EvaluationContext,
): Decision {
  const deciding = chain[0]?.firewall
  const base = { firewall: deciding?.id ?? '', firewallVersion: deciding?.version ?? 0, matches: [] as MatchedRule[] }
  const exceptions: SourcedException[] = chain.flatMap((layer) =>
    layer.firewall.exceptions.map((exception) => ({ exception, inheritedFrom: layer.inheritedFrom })),
  )

  let blocked: MatchedRule | undefined
  let excepted: { rule: MatchedRule; exception: SourcedException } | undefined
  let logged: MatchedRule | undefined
  for (const layer of chain) {
    for (const rule of layer.firewall.rules) {
      if (!phases.includes(rule.executionPhase)) continue
      const result = matchSelector(rule.selector, facts, ctx)
      if (!result.matched) continue
      const matched = toMatchedRule(rule, layer, result.output, result.message)
      base.matches.push(matched)
      const exception = exceptions.find((e) => exceptionApplies(e.exception, rule.id, facts, ctx.now))
      if (exception) {
        // An exception on a log-only rule silences it; only excepted blocks are reported.
        if (matched.block && !excepted) excepted = { rule: matched, exception }
      } else if (matched.block) {
        blocked ??= matched
      } else if (matched.log) {
        logged ??= matched
      }
    }
  }

  if (blocked) return decided(base, 'blocked', blocked)
  if (excepted) {
    return { ...decided(base, 'exception-allowed', excepted.rule), exception: toMatchedException(excepted.exception) }
  }
  if (logged) return decided(base, 'logged', logged)
  return { ...base, outcome: 'allowed', message: 'no rule matched' }
}

type DecisionEventType = 'firewall.blocked' | 'firewall.exception-allowed' | 'firewall.allowed'

/**
 * The event a decision emits, or `null`. Blocks always emit (the 403 quotes the request id an
 * operator must find); an excepted block emits unless the exception has `log: false`; a
 * log-only match emits `firewall.allowed`; a plain allow emits nothing.
 */
export function decisionEventType(decision: Decision): DecisionEventType | null {
  switch (decision.outcome) {
    case 'blocked':
      return 'firewall.blocked'
    case 'exception-allowed':
      return decision.exception?.log === false ? null : 'firewall.exception-allowed'
    case 'logged':
      return 'firewall.allowed'
    default:
      return null
  }
}
