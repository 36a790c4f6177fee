import type { GraphNode, MachineGraph } from './machine-graph'
import { measureNode, measureLabel, type Size } from './measure'
import { orderLayers, positionLayers, type LayerItem } from './layers'

/**
 * A layered (Sugiyama-style) top-to-bottom layout, computed per compound state: the children of
 * each state are ranked by longest path from its initial state (back edges reversed), every
 * edge becomes a chain of virtual nodes through the gaps between ranks (one of them carries the
 * label, so labels get room of their own), layers are ordered by barycenters and placed. A
 * compound state is laid out first and then treated as one big node by its parent.
 */

export interface Box {
  x: number
  y: number
  w: number
  h: number
}

export interface Point {
  x: number
  y: number
}

export interface EdgeRoute {
  source: string
  target: string
  /** Absolute points from the source border to the target border. */
  points: Point[]
  label?: Box & { lines: string[] }
}

export interface Layout {
  width: number
  height: number
  boxes: Map<string, Box>
  /** Initial-state markers: a dot and an arrow to the initial child. */
  starts: { id: string; dot: Point; route: Point[] }[]
  edges: EdgeRoute[]
}

const PAD = 16
const HEADER = 28

interface Local {
  size: Size
  /** Child and virtual positions relative to the container's top-left. */
  items: Map<string, LayerItem>
  chains: { source: string; target: string; via: string[]; label?: string[] }[]
}

/** The child of `container` that contains `id` (or is it), or null. */
function childOf(graph: MachineGraph, container: string, id: string): string | null {
  let current: GraphNode | undefined = graph.nodes.get(id)
  while (current && current.parent !== null) {
    if (current.parent === container) return current.id
    current = graph.nodes.get(current.parent)
  }
  return null
}

function layoutContainer(graph: MachineGraph, container: GraphNode, locals: Map<string, Local>): Size {
  const sizes = new Map<string, Size>()
  for (const child of container.children) {
    const node = graph.nodes.get(child)!
    sizes.set(child, node.children.length ? layoutContainer(graph, node, locals) : measureNode(node))
  }
  const start = `__start:${container.id}`
  const ids = [...(container.initial ? [start] : []), ...container.children]
  if (container.initial) sizes.set(start, { w: 12, h: 12 })
  const edges: { source: string; target: string; original?: { source: string; target: string }; labels?: string[] }[] = []
  if (container.initial) edges.push({ source: start, target: childOf(graph, container.id, container.initial)!, original: { source: start, target: container.initial } })
  for (const edge of graph.edges) {
    const s = childOf(graph, container.id, edge.source)
    const t = childOf(graph, container.id, edge.target)
    if (s && t && s !== t) edges.push({ source: s, target: t, original: edge, labels: edge.labels })
  }
  const rank = rankNodes(ids, edges)
  const items = new Map<string, LayerItem>()
  for (const id of ids) items.set(id, { id, layer: 2 * rank.get(id)!, ...sizes.get(id)!, x: 0, y: 0 })
  const chains: Local['chains'] = []
  let counter = 0
  for (const edge of edges) {
    const from = 2 * rank.get(edge.source)!
    const to = 2 * rank.get(edge.target)!
    const layers = from < to ? range(from + 1, to - 1) : from > to ? range(from - 1, to + 1) : [from + 1]
    const labelAt = from < to ? 0 : Math.floor((layers.length - 1) / 2)
    const via = layers.map((layer, i) => {
      const id = `__v${counter++}:${container.id}`
      const size = i === labelAt && edge.labels ? measureLabel(edge.labels) : { w: 8, h: 8 }
      items.set(id, { id, layer, ...size, x: 0, y: 0, virtual: true })
      return id
    })
    chains.push({ source: edge.original!.source, target: edge.original!.target, via: [edge.source, ...via, edge.target], label: edge.labels })
  }
  orderLayers(items, chains.map((c) => c.via))
  const content = positionLayers(items, chains.map((c) => c.via))
  const isRoot = container.parent === null
  const top = isRoot ? PAD : HEADER + 8
  for (const item of items.values()) {
    item.x += PAD
    item.y += top
  }
  const label = measureNode(container)
  const size = { w: Math.max(content.w + 2 * PAD, label.w + 2 * PAD), h: content.h + top + PAD }
  locals.set(container.id, { size, items, chains })
  return size
}

const range = (a: number, b: number) => {
  const step = a <= b ? 1 : -1
  const out: number[] = []
  for (let i = a; step > 0 ? i <= b : i >= b; i += step) out.push(i)
  return out
}

/** Longest-path ranks over the edges that remain after reversing DFS back edges. */
function rankNodes(ids: string[], edges: { source: string; target: string }[]): Map<string, number> {
  const out = new Map(ids.map((id) => [id, [] as string[]]))
  for (const e of edges) out.get(e.source)!.push(e.target)
  const state = new Map<string, 'open' | 'done'>()
  const forward: [string, string][] = []
  const dfs = (id: string) => {
    state.set(id, 'open')
    for (const next of out.get(id)!) {
      if (state.get(next) === 'open') continue // back edge: ignored for ranking
      forward.push([id, next])
      if (!state.has(next)) dfs(next)
    }
    state.set(id, 'done')
  }
  for (const id of ids) if (!state.has(id)) dfs(id)
  const rank = new Map(ids.map((id) => [id, 0]))
  // Relax in passes; the forward edges form a DAG, so |ids| passes suffice.
  for (let pass = 0; pass < ids.length; pass++) {
    let changed = false
    for (const [s, t] of forward) {
      if (rank.get(t)! < rank.get(s)! + 1) {
        rank.set(t, rank.get(s)! + 1)
        changed = true
      }
    }
    if (!changed) break
  }
  return rank
}

/** Border point of `box` facing `toward` (top or bottom side, kept off the corners). */
function port(box: Box, toward: Point): Point {
  const below = toward.y > box.y + box.h / 2
  const x = Math.min(box.x + box.w - 12, Math.max(box.x + 12, toward.x))
  return { x, y: below ? box.y + box.h : box.y }
}

/**
 * Lays out the whole machine.
 * @example const layout = layoutMachine(machineGraph(machine)); layout.boxes.get('pending')
 */
export function layoutMachine(graph: MachineGraph): Layout {
  const locals = new Map<string, Local>()
  const root = graph.nodes.get('')!
  const size = layoutContainer(graph, root, locals)
  const boxes = new Map<string, Box>()
  const layout: Layout = { width: size.w, height: size.h, boxes, starts: [], edges: [] }
  const place = (containerId: string, ox: number, oy: number) => {
    const local = locals.get(containerId)!
    for (const item of local.items.values()) {
      if (item.virtual || item.id.startsWith('__start:')) continue
      boxes.set(item.id, { x: ox + item.x - item.w / 2, y: oy + item.y, w: item.w, h: item.h })
      if (locals.has(item.id)) place(item.id, ox + item.x - item.w / 2, oy + item.y)
    }
    for (const chain of local.chains) {
      const mid = chain.via.slice(1, -1).map((id) => local.items.get(id)!)
      const [first, last] = [local.items.get(chain.via[0])!, local.items.get(chain.via.at(-1)!)!]
      const down = first.layer < last.layer
      // A label is passed along its left side, so the text sits beside the line, not on it.
      const points = mid.flatMap((item) => {
        if (item.w <= 8) return [{ x: ox + item.x, y: oy + item.y + item.h / 2 }]
        const x = ox + item.x - item.w / 2
        if (first.layer === last.layer) return [{ x, y: oy + item.y + item.h / 2 }]
        const ends = [{ x, y: oy + item.y }, { x, y: oy + item.y + item.h }]
        return down ? ends : ends.reverse()
      })
      const labelItem = mid.find((item) => item.w > 8)
      const label = labelItem && chain.label ? { x: ox + labelItem.x - labelItem.w / 2, y: oy + labelItem.y, w: labelItem.w, h: labelItem.h, lines: chain.label } : undefined
      layout.edges.push({ source: chain.source, target: chain.target, points, label })
    }
    const startItem = local.items.get(`__start:${containerId}`)
    if (startItem) layout.starts.push({ id: `__start:${containerId}`, dot: { x: ox + startItem.x, y: oy + startItem.y + 6 }, route: [] })
  }
  place('', 0, 0)
  // Endpoints once every box is known: a chain's ends attach to the real (maybe nested) states.
  for (const edge of layout.edges) {
    const start = layout.starts.find((s) => s.id === edge.source)
    const target = boxes.get(edge.target)!
    const first = edge.points[0] ?? { x: target.x + target.w / 2, y: target.y }
    const last = edge.points.at(-1) ?? first
    const from = start ? { x: start.dot.x, y: start.dot.y + 6 } : port(boxes.get(edge.source)!, first)
    edge.points = [from, ...edge.points, port(target, last)]
    if (start) start.route = edge.points
  }
  layout.edges = layout.edges.filter((edge) => !edge.source.startsWith('__start:'))
  return layout
}
