import parse from 'spdx-expression-parse'
import type { SpdxNode } from 'spdx-expression-parse'
import ranges from 'spdx-ranges'
import { LRUCache } from 'lru-cache'

/** Longest SPDX expression evaluated; a longer one counts as an undeclared license (CONTRACT section 8). */
export const SPDX_MAX_LENGTH = 1024
/** Most `AND`/`OR`/`WITH` operators evaluated; more count as an undeclared license. */
export const SPDX_MAX_OPERATORS = 64

/** A leaf of an expression or an entry of a license set, after `-only`/`-or-later` became `plus`. */
interface Leaf {
  license: string
  plus: boolean
  exception?: string
}

// Counted on the raw text, before the parser runs: the bound must hold whatever the parser does.
// Lower-case words are counted too, so the count can only err towards "too many".
const OPERATOR = /(?<![A-Za-z0-9.+:-])(?:AND|OR|WITH)(?![A-Za-z0-9.+:-])/gi

/** Whether the expression is small enough to evaluate (over either bound it counts as undeclared). */
export function withinSpdxBounds(expression: string): boolean {
  if (expression.length > SPDX_MAX_LENGTH) return false
  let operators = 0
  for (const _ of expression.matchAll(OPERATOR)) if (++operators > SPDX_MAX_OPERATORS) return false
  return true
}

/**
 * Parsed expressions, by text: a packument repeats one license on each of up to 60,000 versions,
 * and parsing one at the bound costs about 0.1 ms (the parser matches each token against the SPDX
 * list), so the text is parsed once. Trees are never changed after parsing; unparseable text is kept as null.
 */
const trees = new LRUCache<string, { tree: SpdxNode | null }>({ max: 512 })

function parsed(expression: string): SpdxNode | null {
  const known = trees.get(expression)
  if (known) return known.tree
  let tree: SpdxNode | null = null
  try {
    tree = parse(expression)
  } catch {
    // not SPDX: null
  }
  trees.set(expression, { tree })
  return tree
}

// GPL-style `-only` / `-or-later` ids mean the same as a plain id and `id+` (as spdx-satisfies reads them).
function leafOf(license: string, plus: boolean, exception: string | undefined): Leaf {
  const base = { ...(exception ? { exception } : {}) }
  if (license.endsWith('-or-later')) return { license: license.slice(0, -'-or-later'.length), plus: true, ...base }
  if (license.endsWith('-only')) return { license: license.slice(0, -'-only'.length), plus: false, ...base }
  return { license, plus, ...base }
}

function rangeIndex(range: readonly (string | readonly string[])[], license: string): number {
  return range.findIndex((element) => element === license || (Array.isArray(element) && element.includes(license)))
}

// `id+` covers the id and every later version in its range (spdx-ranges lists versions in order).
function atOrAfter(license: string, floor: string): boolean {
  if (license === floor) return true
  return ranges.some((range) => {
    const at = rangeIndex(range, license)
    const from = rangeIndex(range, floor)
    return at >= 0 && from >= 0 && at >= from
  })
}

function sameRange(a: string, b: string): boolean {
  return a === b || ranges.some((range) => rangeIndex(range, a) >= 0 && rangeIndex(range, b) >= 0)
}

/** The compatibility test spdx-satisfies applies between one leaf and one approved id. */
function compatible(leaf: Leaf, approved: Leaf): boolean {
  if (leaf.exception !== approved.exception) return false
  if (approved.plus)
    return leaf.plus ? sameRange(leaf.license, approved.license) : atOrAfter(leaf.license, approved.license)
  return leaf.plus ? atOrAfter(approved.license, leaf.license) : leaf.license === approved.license
}

// A set edited by hand should not turn every decision into "not allowed": entries that are not a
// single valid license id are skipped.
function approvedLeaves(ids: readonly string[]): Leaf[] {
  const leaves: Leaf[] = []
  for (const id of ids) {
    const node = withinSpdxBounds(id) ? parsed(id) : null
    if (node && 'license' in node) leaves.push(leafOf(node.license, node.plus === true, node.exception))
  }
  return leaves
}

/**
 * Evaluates the parsed tree bottom-up, each node once: time linear in the expression (times the
 * set's size), unlike expanding it into alternatives, which doubles with every `AND`. The tree's
 * depth is bounded by the operator bound, so the recursion is too.
 */
function evaluate(node: SpdxNode, approved: readonly Leaf[]): boolean {
  if ('conjunction' in node) {
    const left = evaluate(node.left, approved)
    const right = evaluate(node.right, approved)
    return node.conjunction === 'and' ? left && right : left || right
  }
  if (!('license' in node)) return false
  const leaf = leafOf(node.license, node.plus === true, node.exception)
  return approved.some((entry) => compatible(leaf, entry))
}

/**
 * Whether the expression is satisfied by the license set; `null` when the expression is missing,
 * not valid SPDX (`UNLICENSED`, `SEE LICENSE IN ...`) or past the bounds (the caller decides how
 * "unknown" counts).
 * @example licenseSatisfied('MIT OR GPL-3.0-only', ['MIT']) // true
 */
export function licenseSatisfied(expression: string | undefined, ids: readonly string[]): boolean | null {
  if (!expression || !withinSpdxBounds(expression)) return null
  const tree = parsed(expression)
  if (!tree) return null
  const approved = approvedLeaves(ids)
  return approved.length === 0 ? false : evaluate(tree, approved)
}

/**
 * The license as a block message shows it: an expression past the bounds is named, not echoed.
 * @example licenseShown(undefined) // 'none'
 */
export function licenseShown(expression: string | undefined): string {
  if (expression === undefined) return 'none'
  if (withinSpdxBounds(expression)) return expression
  return `(an expression over ${SPDX_MAX_LENGTH} characters or ${SPDX_MAX_OPERATORS} operators, counted as undeclared)`
}
