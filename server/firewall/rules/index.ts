export type { PackageVersionFacts, EvaluationContext, SelectorResult } from './types'
export { matchSelector, INSTALL_SCRIPTS } from './selectors'
export { matchesGlob } from './glob'
export {
  MAX_PATTERN_LENGTH,
  MAX_PATTERNS_PER_RULE,
  patternLimitProblems,
  refuseOversizedPatterns,
} from './pattern-limits'
export { normalizePackageName } from './names'
export { licenseSatisfied, isValidSpdxExpression } from './license'
export { exceptionApplies, exceptionSelectorMatches, isExceptionActive } from './exceptions'
export {
  evaluate,
  decisionEventType,
  type Decision,
  type DecisionEventType,
  type DecisionOutcome,
  type FirewallLayer,
  type MatchedException,
  type MatchedRule,
} from './evaluate'
export { validateRuleForEcosystem, collectLicenseSetIds, type RuleProblem } from './validate'
