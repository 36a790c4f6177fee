import { invalid } from '../../common/errors'

/** Deepest selector nesting a rule may hold: a leaf alone is 1, `not(leaf)` is 2 (CONTRACT section 8). */
export const MAX_SELECTOR_DEPTH = 16

/** The child selectors of a raw (not yet validated) selector: `function.selector`, `function.selectors[]`. */
function childrenOf(raw: unknown): unknown[] {
  if (typeof raw !== 'object' || raw === null) return []
  const fn = (raw as { function?: unknown }).function
  if (typeof fn !== 'object' || fn === null) return []
  const { selector, selectors } = fn as { selector?: unknown; selectors?: unknown }
  const children = Array.isArray(selectors) ? [...selectors] : []
  if (selector !== undefined) children.push(selector)
  return children
}

/**
 * How deep a raw selector nests, counted without recursion and given up on once past `limit`:
 * zod's recursive schemas (and every walk after them) recurse once per level, so the depth has to
 * be known before any of them runs.
 * @example selectorDepth({ function: { name: 'not', selector: { function: { name: 'malware' } } } }) // 2
 */
export function selectorDepth(raw: unknown, limit = MAX_SELECTOR_DEPTH): number {
  let deepest = 0
  const stack: { node: unknown; depth: number }[] = [{ node: raw, depth: 1 }]
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!
    deepest = Math.max(deepest, depth)
    if (deepest > limit) return deepest
    for (const child of childrenOf(node)) stack.push({ node: child, depth: depth + 1 })
  }
  return deepest
}

/**
 * Refuses (400 `selector_too_deep`) a raw selector nested past {@link MAX_SELECTOR_DEPTH}.
 * `where` names it in the problem, e.g. `rules[2].selector`.
 */
export function refuseDeepSelector(raw: unknown, where = 'selector'): void {
  if (selectorDepth(raw) <= MAX_SELECTOR_DEPTH) return
  const message = `a selector nests at most ${MAX_SELECTOR_DEPTH} deep (all, any and not count one level each)`
  throw invalid('selector_too_deep', `${where}: ${message}`, [{ path: where, message }])
}
