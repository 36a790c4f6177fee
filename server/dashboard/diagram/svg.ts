import { escapeHtml } from '../html'
import type { Layout, Point } from './layout'
import type { MachineGraph } from './machine-graph'
import { LABEL_LINE, NODE_FONT, SMALL_FONT, nodeDetails } from './measure'

/**
 * SVG markup of a laid-out machine. Each state is a `<g class="state" data-state="path">`, so
 * the page script can move the highlight without redrawing. The dashboard serves the stylesheet
 * with its own CSS (its CSP refuses inline styles); exported files embed it (`standalone`).
 */

interface RenderOptions {
  /** Active state paths (see `activePaths`). */
  active?: string[]
  /** Accessible title. */
  title?: string
  /** Prefix for ids inside the SVG (several diagrams on one page). */
  idPrefix?: string
  /** Embed the stylesheet (a file of its own); pages get it from /assets/dashboard.css instead. */
  standalone?: boolean
}

const esc = escapeHtml
const r = (n: number) => Math.round(n * 10) / 10

const CORNER = 6

/** An orthogonal route as a path, its bends rounded (the radius shrinks on short segments). */
function polyline(points: Point[]): string {
  let d = `M${r(points[0].x)},${r(points[0].y)}`
  for (let i = 1; i < points.length; i++) {
    const [a, b, c] = [points[i - 1], points[i], points[i + 1]]
    if (!c) {
      d += ` L${r(b.x)},${r(b.y)}`
      continue
    }
    const radius = Math.min(CORNER, Math.hypot(b.x - a.x, b.y - a.y) / 2, Math.hypot(c.x - b.x, c.y - b.y) / 2)
    const toward = (from: Point, to: Point) => {
      const length = Math.hypot(to.x - from.x, to.y - from.y) || 1
      return { x: from.x + ((to.x - from.x) / length) * radius, y: from.y + ((to.y - from.y) / length) * radius }
    }
    const [before, after] = [toward(b, a), toward(b, c)]
    d += ` L${r(before.x)},${r(before.y)} Q${r(b.x)},${r(b.y)} ${r(after.x)},${r(after.y)}`
  }
  return d
}

/** The diagrams' stylesheet: embedded in exported files, appended to the dashboard's CSS. */
export const MACHINE_SVG_STYLE = `
.machine-svg { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.machine-svg .state rect.box { fill: #ffffff; stroke: #64748b; stroke-width: 1.5; }
.machine-svg .state.compound > rect.box { fill: #f8fafc; stroke-dasharray: 5 4; }
.machine-svg .state.transient rect.box { stroke-dasharray: 2 3; fill: #f8fafc; }
.machine-svg .state.final rect.inner { fill: none; stroke: #64748b; stroke-width: 1; }
.machine-svg .state text.name { font-size: ${NODE_FONT}px; font-weight: 600; fill: #0f172a; }
.machine-svg .state text.detail { font-size: ${SMALL_FONT}px; fill: #475569; }
.machine-svg .state.is-active > rect.box { fill: #dbeafe; stroke: #2563eb; stroke-width: 3; }
.machine-svg .state.is-active > text.name { fill: #1e3a8a; }
.machine-svg .state.compound.is-active > rect.box { fill: #eff6ff; stroke-width: 2; }
.machine-svg path.edge { fill: none; stroke: #94a3b8; stroke-width: 1.4; }
.machine-svg .label rect { fill: #ffffff; fill-opacity: 0.92; }
.machine-svg .label text { font-size: ${SMALL_FONT}px; fill: #334155; }
.machine-svg .start { fill: #334155; }
`

/**
 * The diagram as an SVG string.
 * @example renderMachineSvg(graph, await layoutMachine(graph), { active: ['quarantined'] })
 */
export function renderMachineSvg(graph: MachineGraph, layout: Layout, options: RenderOptions = {}): string {
  const prefix = options.idPrefix ?? graph.id
  const active = new Set(options.active ?? [])
  const arrow = `${prefix}-arrow`
  const parts: string[] = []
  const title = options.title ?? `State machine ${graph.id}`
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="machine-svg" viewBox="0 0 ${r(layout.width)} ${r(layout.height)}" width="${r(layout.width)}" height="${r(layout.height)}" role="img" aria-labelledby="${esc(prefix)}-title" data-machine="${esc(graph.id)}">`,
  )
  parts.push(`<title id="${esc(prefix)}-title">${esc(title)}</title>`)
  if (options.standalone) parts.push(`<style>${MACHINE_SVG_STYLE}</style>`)
  parts.push(
    `<defs><marker id="${esc(arrow)}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#64748b"/></marker></defs>`,
  )
  // Compound states first (behind), outermost first.
  const ordered = [...layout.boxes.entries()].sort(([a], [b]) => a.split('.').length - b.split('.').length)
  const stateGroup = (id: string) => {
    const node = graph.nodes.get(id)!
    const box = layout.boxes.get(id)!
    const classes = [
      'state',
      node.children.length ? 'compound' : '',
      node.type === 'final' ? 'final' : '',
      node.transient ? 'transient' : '',
      active.has(id) ? 'is-active' : '',
    ]
    const tooltip = [`${id}${node.transient ? ' (transient)' : ''}`, ...node.internal.map((e) => `handles ${e}`)].join(
      '\n',
    )
    const out = [
      `<g class="${classes.filter(Boolean).join(' ')}" data-state="${esc(id)}"><title>${esc(tooltip)}</title>`,
    ]
    out.push(`<rect class="box" x="${r(box.x)}" y="${r(box.y)}" width="${r(box.w)}" height="${r(box.h)}" rx="10"/>`)
    if (node.type === 'final')
      out.push(
        `<rect class="inner" x="${r(box.x + 4)}" y="${r(box.y + 4)}" width="${r(box.w - 8)}" height="${r(box.h - 8)}" rx="7"/>`,
      )
    if (node.children.length) {
      out.push(`<text class="name" x="${r(box.x + 12)}" y="${r(box.y + 19)}">${esc(node.key)}</text>`)
    } else {
      out.push(
        `<text class="name" x="${r(box.x + box.w / 2)}" y="${r(box.y + 25)}" text-anchor="middle">${esc(node.key)}</text>`,
      )
      nodeDetails(node).forEach((line, i) =>
        out.push(
          `<text class="detail" x="${r(box.x + box.w / 2)}" y="${r(box.y + 25 + (i + 1) * LABEL_LINE)}" text-anchor="middle">${esc(line)}</text>`,
        ),
      )
    }
    out.push('</g>')
    return out.join('')
  }
  for (const [id] of ordered) if (graph.nodes.get(id)!.children.length) parts.push(stateGroup(id))
  for (const start of layout.starts) {
    parts.push(`<circle class="start" cx="${r(start.dot.x)}" cy="${r(start.dot.y)}" r="5"/>`)
    if (start.route.length)
      parts.push(`<path class="edge" d="${polyline(start.route)}" marker-end="url(#${esc(arrow)})"/>`)
  }
  for (const edge of layout.edges) {
    if (edge.points.length < 2) continue
    parts.push(
      `<path class="edge" data-edge="${esc(edge.source)}->${esc(edge.target)}" d="${polyline(edge.points)}" marker-end="url(#${esc(arrow)})"/>`,
    )
  }
  for (const [id] of ordered) if (!graph.nodes.get(id)!.children.length) parts.push(stateGroup(id))
  for (const edge of layout.edges) {
    if (!edge.label) continue
    const { x, y, w, h, lines } = edge.label
    const text = lines
      .map((line, i) => `<text x="${r(x + 7)}" y="${r(y + 4 + (i + 1) * LABEL_LINE - 3)}">${esc(line)}</text>`)
      .join('')
    parts.push(`<g class="label"><rect x="${r(x)}" y="${r(y)}" width="${r(w)}" height="${r(h)}" rx="4"/>${text}</g>`)
  }
  parts.push('</svg>')
  return parts.join('\n')
}
