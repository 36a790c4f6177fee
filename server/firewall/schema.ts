import { z } from 'zod'
import { ClientId } from '../common/ids'
import { DURATION_PATTERN } from '../common/duration'
import { MAX_PATTERNS_PER_RULE, MAX_PATTERN_LENGTH } from './rules/pattern-limits'
import { refuseDeepSelector } from './rules/selector-depth'

/** Firewall permission strings. */
export const FIREWALL_PERMISSIONS = [
  'fw:access',
  'fw:clone',
  'fw:read',
  'fw:update:config',
  'fw:update:credentials',
  'fw:update:rule',
  'fw:update:exception',
  'fw:delete',
] as const
export const FirewallPermission = z.enum(FIREWALL_PERMISSIONS)
export type FirewallPermission = z.infer<typeof FirewallPermission>

export const ECOSYSTEMS = ['npm', 'pypi', 'maven', 'nuget'] as const
export const Ecosystem = z.enum(ECOSYSTEMS)
export type Ecosystem = z.infer<typeof Ecosystem>

export const EXECUTION_PHASES = ['download', 'upload', 'versions'] as const
export const ExecutionPhase = z.enum(EXECUTION_PHASES)
export type ExecutionPhase = z.infer<typeof ExecutionPhase>

export const EXCEPTION_REASONS = [
  'false_positive',
  'accepted_risk',
  'no_alternative',
  'internal_package',
  'temporary_workaround',
  'other',
] as const
const ExceptionReason = z.enum(EXCEPTION_REASONS)

export const SEVERITIES = ['low', 'moderate', 'high', 'critical'] as const
export const Severity = z.enum(SEVERITIES)
export type Severity = z.infer<typeof Severity>

/** The placeholder every read shows in place of a credential value. */
export const REDACTED = '[REDACTED]'

const Duration = z.string().regex(DURATION_PATTERN, 'must be a duration such as 72h or 7d')

/** A package-name glob (rules/glob.ts); bounded so that matching stays cheap. */
const PackagePattern = z
  .string()
  .min(1)
  .max(MAX_PATTERN_LENGTH, `a package-name pattern is at most ${MAX_PATTERN_LENGTH} characters`)

// ---- Rule selectors ----------------------------------------------

export type SelectorFunction =
  | { name: 'packageName'; patterns: string[] }
  | { name: 'versionRange'; package: string; range: string }
  | { name: 'minimumAge'; duration: string }
  | { name: 'license'; licenseSet: string; mode: 'allow' | 'deny' }
  | { name: 'deprecated' }
  | { name: 'installScripts' }
  | { name: 'vulnerability'; minSeverity?: Severity; minCvss?: number }
  | { name: 'malware' }
  | { name: 'all'; selectors: Selector[] }
  | { name: 'any'; selectors: Selector[] }
  | { name: 'not'; selector: Selector }
export type Selector = { function: SelectorFunction }

export const Selector: z.ZodType<Selector> = z
  .lazy(() => z.object({ function: SelectorFunctionSchema }).strict())
  .meta({ id: 'Selector' })

const SelectorFunctionSchema: z.ZodType<SelectorFunction> = z
  .lazy(() =>
    z.discriminatedUnion('name', [
      z
        .object({
          name: z.literal('packageName'),
          patterns: z
            .array(PackagePattern)
            .min(1)
            .max(MAX_PATTERNS_PER_RULE, `a rule holds at most ${MAX_PATTERNS_PER_RULE} package-name patterns`),
        })
        .strict(),
      z
        .object({
          name: z.literal('versionRange'),
          package: z.string().min(1),
          // Checked against the firewall's ecosystem when the rule is saved (semver for npm,
          // PEP 440 for PyPI, Maven and NuGet range syntax): see rules/versions/range.ts.
          range: z.string().min(1).max(500),
        })
        .strict(),
      z.object({ name: z.literal('minimumAge'), duration: Duration }).strict(),
      z.object({ name: z.literal('license'), licenseSet: z.string().min(1), mode: z.enum(['allow', 'deny']) }).strict(),
      z.object({ name: z.literal('deprecated') }).strict(),
      z.object({ name: z.literal('installScripts') }).strict(),
      z
        .object({
          name: z.literal('vulnerability'),
          minSeverity: Severity.optional(),
          minCvss: z.number().min(0).max(10).optional(),
        })
        .strict(),
      z.object({ name: z.literal('malware') }).strict(),
      z.object({ name: z.literal('all'), selectors: z.array(Selector).min(1) }).strict(),
      z.object({ name: z.literal('any'), selectors: z.array(Selector).min(1) }).strict(),
      z.object({ name: z.literal('not'), selector: Selector }).strict(),
    ]),
  )
  .meta({ id: 'SelectorFunction' })

// ---- Rules and exceptions --------------------------------------------------------------

const RuleEffect = z.object({ block: z.boolean().default(true), log: z.boolean().default(true) }).strict()

// The schema checks shape; what a rule may hold beyond it (patterns over all its selectors,
// references, the ecosystem) is judged by validateFirewall (../firewall/validation.ts) at every
// write. Only the depth is checked here, on the raw value, because the recursive schema would
// otherwise recurse once per level of an unbounded body (a preprocess that throws stops the
// parse there; validateFirewall applies the same limit to stored versions).
const RuleSelector = z.preprocess((raw) => {
  refuseDeepSelector(raw)
  return raw
}, Selector)

export const Rule = z
  .object({
    id: ClientId,
    executionPhase: ExecutionPhase,
    selector: RuleSelector,
    ruleEffect: RuleEffect.default({ block: true, log: true }),
    description: z.string().max(2000).default(''),
  })
  .strict()
  .meta({ id: 'Rule' })
export type Rule = z.infer<typeof Rule>

export const ExceptionSelector = z
  .object({ packageName: PackagePattern, version: z.string().min(1).max(256).optional() })
  .strict()

export const Exception = z
  .object({
    id: ClientId,
    rule: ClientId,
    selector: ExceptionSelector,
    log: z.boolean().default(true),
    expires: z.iso.datetime({ offset: true }).optional(),
    reason: ExceptionReason.optional(),
    notes: z.string().max(4000).optional(),
  })
  .strict()
  .meta({ id: 'Exception' })
export type Exception = z.infer<typeof Exception>

// ---- Upstreams -------------------------------------------------------------------------

export const Credentials = z.union([
  z.object({ username: z.string().min(1), password: z.string().min(1) }).strict(),
  z.object({ token: z.string().min(1) }).strict(),
])
export type Credentials = z.infer<typeof Credentials>

const ArtifactCredential = z
  .object({ host: z.string().min(1).max(253), credentials: z.object({ token: z.string().min(1) }).strict() })
  .strict()

export const Upstream = z
  .object({
    id: ClientId,
    endpoint: z.url({ protocol: /^https?$/ }),
    credentials: Credentials.optional(),
    internal: z.boolean().default(false),
    cached: z.boolean().default(false),
    artifactCredentials: z.array(ArtifactCredential).optional(),
  })
  .strict()
  .meta({ id: 'Upstream' })
export type Upstream = z.infer<typeof Upstream>

// ---- Firewall --------------------------------------------------------------------------

/**
 * A principal key (user id, service principal id, team id) or `everybody`. `__proto__` is refused:
 * no principal can have that id, and zod would otherwise drop the key without a word.
 */
export const Permissions = z.preprocess(
  (value, ctx) => {
    if (value !== null && typeof value === 'object' && Object.hasOwn(value, '__proto__')) {
      ctx.issues.push({
        code: 'custom',
        message: '"__proto__" is not a principal id',
        input: value,
        path: ['__proto__'],
      })
    }
    return value
  },
  z.record(z.string().min(1).max(128), z.array(FirewallPermission)),
)

function uniqueIds(items: { id: string }[]): boolean {
  return new Set(items.map((item) => item.id)).size === items.length
}

/** The body of `PUT /v1/{ns}/config/{fw}`: everything the client owns. */
export const FirewallInput = z
  .object({
    id: ClientId.optional(),
    version: z.number().int().optional(),
    updatedAt: z.string().optional(),
    ecosystem: Ecosystem.default('npm'),
    name: z.string().max(200).optional(),
    description: z.string().max(4000).default(''),
    upstreams: z.array(Upstream).default([]).refine(uniqueIds, 'upstream ids must be unique'),
    rules: z.array(Rule).default([]).refine(uniqueIds, 'rule ids must be unique'),
    exceptions: z.array(Exception).default([]).refine(uniqueIds, 'exception ids must be unique'),
    permissions: Permissions.default({}),
    extends: z.array(ClientId).default([]),
  })
  .strict()
  .meta({ id: 'FirewallInput' })
export type FirewallInput = z.infer<typeof FirewallInput>

/** A stored firewall configuration (the OpenAPI document plus `extends`). */
export const Firewall = z
  .object({
    id: ClientId,
    version: z.number().int().min(1),
    ecosystem: Ecosystem,
    name: z.string(),
    description: z.string(),
    upstreams: z.array(Upstream),
    rules: z.array(Rule),
    exceptions: z.array(Exception),
    permissions: Permissions,
    extends: z.array(ClientId),
    updatedAt: z.string(),
  })
  .meta({ id: 'Firewall' })
export type Firewall = z.infer<typeof Firewall>
