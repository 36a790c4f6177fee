import parse from 'spdx-expression-parse'
import satisfies from 'spdx-satisfies'

/** Whether a text is a valid SPDX expression (`UNLICENSED`, `SEE LICENSE IN ...` are not). */
function isValidSpdxExpression(expression: string): boolean {
  try {
    parse(expression)
    return true
  } catch {
    return false
  }
}

// spdx-satisfies rejects the whole set when one entry is invalid or compound; a set edited by
// hand should not turn every decision into "not allowed", so such entries are skipped.
function approvedIds(ids: readonly string[]): string[] {
  return ids.filter((id) => {
    try {
      return !('conjunction' in parse(id))
    } catch {
      return false
    }
  })
}

/**
 * Whether the expression is satisfied by the license set; `null` when the expression is missing
 * or not valid SPDX (the caller decides how "unknown" counts).
 * @example licenseSatisfied('MIT OR GPL-3.0-only', ['MIT']) // true
 */
export function licenseSatisfied(expression: string | undefined, ids: readonly string[]): boolean | null {
  if (!expression || !isValidSpdxExpression(expression)) return null
  const approved = approvedIds(ids)
  if (approved.length === 0) return false
  try {
    return satisfies(expression, approved)
  } catch {
    // spdx-satisfies bundles an older parser that knows fewer ids than ours.
    return null
  }
}
