import type { GraphNode } from './machine-graph'

/** Sizes from character counts: the renderer uses fixed font sizes, so estimates are stable. */

interface Size {
  w: number
  h: number
}

/** Approximate advance of one character at the given font size (system sans-serif). */
const textWidth = (text: string, fontSize: number) => Math.ceil(text.length * fontSize * 0.6)

export const NODE_FONT = 14
export const SMALL_FONT = 11
export const LABEL_LINE = 14

/** Lines drawn inside a state box below its name. */
export const nodeDetails = (node: GraphNode): string[] => node.invokes.map((src) => `invoke ${src}`)

export function measureNode(node: GraphNode): Size {
  const details = nodeDetails(node)
  const w = Math.max(
    textWidth(node.key, NODE_FONT) + 36,
    ...details.map((line) => textWidth(line, SMALL_FONT) + 28),
    112,
  )
  return { w, h: 40 + details.length * LABEL_LINE }
}

export function measureLabel(lines: string[]): Size {
  return { w: Math.max(...lines.map((line) => textWidth(line, SMALL_FONT))) + 14, h: lines.length * LABEL_LINE + 8 }
}
