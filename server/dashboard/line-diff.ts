import { diffArrays } from 'diff'

/**
 * A line diff (jsdiff) and its grouping into hunks with context, for comparing two firewall
 * versions as pretty-printed JSON.
 */

interface DiffLine {
  kind: 'same' | 'add' | 'del'
  text: string
  /** 1-based line numbers in the old / new text (absent on the side that lacks the line). */
  oldNo?: number
  newNo?: number
}

/**
 * The edit script turning `a` into `b`, line by line (jsdiff's Myers diff over the line arrays),
 * each line numbered on the side(s) it appears on.
 * @example diffLines(['x', 'y'], ['x', 'z']) // same x, del y, add z
 */
export function diffLines(a: string[], b: string[]): DiffLine[] {
  const lines: DiffLine[] = []
  let oldNo = 0
  let newNo = 0
  for (const change of diffArrays(a, b)) {
    for (const text of change.value) {
      if (change.added) lines.push({ kind: 'add', text, newNo: ++newNo })
      else if (change.removed) lines.push({ kind: 'del', text, oldNo: ++oldNo })
      else lines.push({ kind: 'same', text, oldNo: ++oldNo, newNo: ++newNo })
    }
  }
  return lines
}

interface Hunk {
  oldStart: number
  newStart: number
  lines: DiffLine[]
}

/** Changed regions with `context` unchanged lines around each; empty when the texts are equal. */
export function hunks(lines: DiffLine[], context = 3): Hunk[] {
  const changed = lines.map((line, i) => (line.kind === 'same' ? -1 : i)).filter((i) => i >= 0)
  const result: Hunk[] = []
  let current: { from: number; to: number } | null = null
  const ranges: { from: number; to: number }[] = []
  for (const i of changed) {
    const from = Math.max(0, i - context)
    const to = Math.min(lines.length - 1, i + context)
    if (current && from <= current.to + 1) current.to = to
    else ranges.push((current = { from, to }))
  }
  for (const { from, to } of ranges) {
    const slice = lines.slice(from, to + 1)
    const firstOld = slice.find((l) => l.oldNo !== undefined)?.oldNo ?? 0
    const firstNew = slice.find((l) => l.newNo !== undefined)?.newNo ?? 0
    result.push({ oldStart: firstOld, newStart: firstNew, lines: slice })
  }
  return result
}

/** Line diff of two values as stable, pretty-printed JSON. */
export function diffJson(before: unknown, after: unknown): DiffLine[] {
  const text = (value: unknown) => JSON.stringify(value, null, 2).split('\n')
  return diffLines(text(before), text(after))
}
