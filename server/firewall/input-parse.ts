import { z, ZodError } from 'zod'
import { TimeSlice } from '../common/time-slice'
import { FirewallInput, Permissions, Rule } from './schema'

/**
 * `FirewallInput.safeParse` for a body of up to the API's limit (1 MiB) without holding the event
 * loop (CONTRACT.md 8): zod took 80-150 ms in one go for 47,500 principals and 25-75 ms for 11,500
 * rules. A body whose `rules` or `permissions` is large is parsed in parts: the rest of the body
 * with those emptied, then the rules and the principals a chunk at a time with pauses between, and
 * the rule-id uniqueness after them. The result is the one `FirewallInput.safeParse` gives: the
 * same data, the same issues (path and message) in the same order (test/firewall/input-parse.test.ts).
 * @example const parsed = await parseFirewallInput(body); if (parsed.success) use(parsed.data)
 */
export async function parseFirewallInput(value: unknown, slice = new TimeSlice()): Promise<Parsed<FirewallInput>> {
  if (!isPlainObject(value)) return FirewallInput.safeParse(value)
  const rules = Array.isArray(value.rules) && value.rules.length > RULE_CHUNK ? (value.rules as unknown[]) : null
  // A `__proto__` principal stops zod before the entries are read: the whole parse is cheap then.
  const permissions =
    isPlainObject(value.permissions) && !Object.hasOwn(value.permissions, '__proto__') ? value.permissions : null
  // Its key listing (9-20 ms for 47,500 principals) takes a turn of its own, not the body parse's last.
  if (permissions) await slice.pause()
  const principals = permissions ? Object.keys(permissions) : []
  const split = { rules: rules !== null, permissions: principals.length > PRINCIPAL_CHUNK }
  if (!split.rules && !split.permissions) return FirewallInput.safeParse(value)
  const rest: Record<string, unknown> = { ...value }
  if (split.rules) rest.rules = []
  if (split.permissions) rest.permissions = {}
  const head = FirewallInput.safeParse(rest)
  await slice.step()
  const parts = new Map<string, z.core.$ZodIssue[]>()
  let parsedRules: Rule[] = []
  if (rules) {
    const issues: z.core.$ZodIssue[] = []
    for (let at = 0; at < rules.length; at += RULE_CHUNK) {
      const chunk = RuleList.safeParse(rules.slice(at, at + RULE_CHUNK))
      if (chunk.success) parsedRules.push(...chunk.data)
      else issues.push(...chunk.error.issues.map((issue) => moved(issue, 'rules', at)))
      await slice.step()
    }
    // As the schema's refinement: judged only on rules that all parsed.
    if (issues.length === 0 && !uniqueIds(parsedRules))
      issues.push({ code: 'custom', message: 'rule ids must be unique', path: ['rules'], input: parsedRules })
    if (issues.length > 0) parsedRules = []
    parts.set('rules', issues)
  }
  let parsedPermissions: Record<string, FirewallInput['permissions'][string]> = {}
  if (permissions && split.permissions) {
    const issues: z.core.$ZodIssue[] = []
    for (let at = 0; at < principals.length; at += PRINCIPAL_CHUNK) {
      const chunk: Record<string, unknown> = {}
      for (const key of principals.slice(at, at + PRINCIPAL_CHUNK)) chunk[key] = permissions[key]
      const parsed = Permissions.safeParse(chunk)
      if (parsed.success) Object.assign(parsedPermissions, parsed.data)
      else issues.push(...parsed.error.issues.map((issue) => moved(issue, 'permissions', 0)))
      await slice.step()
    }
    if (issues.length > 0) parsedPermissions = {}
    parts.set('permissions', issues)
  }
  const issues = merged(head.success ? [] : head.error.issues, parts)
  if (issues.length > 0 || !head.success) return { success: false, error: new ZodError(issues) }
  const data = { ...head.data }
  if (split.rules) data.rules = parsedRules
  if (split.permissions) data.permissions = parsedPermissions
  return { success: true, data }
}

/** What `safeParse` answers, its error not bound to the output type. */
export type Parsed<T> = { success: true; data: T } | { success: false; error: ZodError }

/** Rules and principals parsed per chunk: well under a slice each. */
const RULE_CHUNK = 100
const PRINCIPAL_CHUNK = 1000

const RuleList = z.array(Rule)

/** The body's fields in the order zod reads them (its issues come in this order). */
const FIELDS = Object.keys(FirewallInput.shape)

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

const uniqueIds = (items: { id: string }[]): boolean => new Set(items.map((item) => item.id)).size === items.length

/** `issue` of a chunk as an issue of the body: under `field`, array indexes moved by `offset`. */
function moved(issue: z.core.$ZodIssue, field: string, offset: number): z.core.$ZodIssue {
  const [first, ...path] = issue.path
  const at = typeof first === 'number' ? first + offset : first
  return { ...issue, path: at === undefined ? [field] : [field, at, ...path] }
}

/**
 * The head's issues with each part's issues where zod would have reported them: after the issues
 * of the fields before it, before those of the fields after it and of the body itself (unknown keys).
 */
function merged(head: readonly z.core.$ZodIssue[], parts: Map<string, z.core.$ZodIssue[]>): z.core.$ZodIssue[] {
  const rank = (issue: z.core.$ZodIssue) => {
    const index = issue.path.length > 0 ? FIELDS.indexOf(String(issue.path[0])) : -1
    return index < 0 ? FIELDS.length : index
  }
  const all = [...head]
  for (const [field, issues] of parts) {
    const before = FIELDS.indexOf(field)
    const at = all.findIndex((issue) => rank(issue) > before)
    all.splice(at < 0 ? all.length : at, 0, ...issues)
  }
  return all
}
