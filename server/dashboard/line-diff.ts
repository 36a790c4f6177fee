/**
 * A pure line diff (Myers' O(ND) algorithm) and its grouping into hunks with context, for
 * comparing two firewall versions as pretty-printed JSON.
 */

export interface DiffLine {
  kind: 'same' | 'add' | 'del'
  text: string
  /** 1-based line numbers in the old / new text (absent on the side that lacks the line). */
  oldNo?: number
  newNo?: number
}

/**
 * The edit script turning `a` into `b`, line by line.
 * @example diffLines(['x', 'y'], ['x', 'z']) // same x, del y, add z
 */
export function diffLines(a: string[], b: string[]): DiffLine[] {
  const n = a.length
  const m = b.length
  const max = n + m
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  outer: for (let d = 0; d <= max; d++) {
    trace.push(v.slice())
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) break outer
    }
  }
  // Walk the trace backwards to recover the path.
  const lines: DiffLine[] = []
  let x = n
  let y = m
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]
    const k = x - y
    const prevK = k === -d || (k !== d && vd[offset + k - 1] < vd[offset + k + 1]) ? k + 1 : k - 1
    const prevX = d === 0 ? 0 : vd[offset + prevK]
    const prevY = prevX - prevK
    while (x > prevX && y > prevY) {
      lines.push({ kind: 'same', text: a[x - 1], oldNo: x, newNo: y })
      x--
      y--
    }
    if (d === 0) break
    if (x === prevX) lines.push({ kind: 'add', text: b[y - 1], newNo: y })
    else lines.push({ kind: 'del', text: a[x - 1], oldNo: x })
    x = prevX
    y = prevY
  }
  return lines.reverse()
}

export interface Hunk {
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
