// The bundled build runs ELK in-process (no web worker), which is what a server wants.
import ELK from 'elkjs/lib/elk.bundled.js'
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api'
import type { GraphNode, MachineGraph } from './machine-graph'
import { measureLabel, measureNode } from './measure'

/**
 * The machine laid out by ELK (layered, top to bottom, orthogonal edge routing). Compound states
 * are ELK nodes with children and edges may cross their borders (`INCLUDE_CHILDREN`), so one
 * layout run places every state, routes every edge (self-transitions included) and puts each
 * label beside its own edge. Each compound state gets a start dot wired to its initial child.
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
const START = 12

const elk = new ELK()

const ROOT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.padding': `[top=${PAD},left=${PAD},bottom=${PAD},right=${PAD}]`,
  'elk.spacing.nodeNode': '32',
  'elk.spacing.edgeNode': '16',
  'elk.spacing.edgeEdge': '12',
  'elk.spacing.edgeLabel': '4',
  'elk.spacing.labelNode': '8',
  'elk.layered.spacing.nodeNodeBetweenLayers': '40',
  'elk.layered.spacing.edgeNodeBetweenLayers': '16',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '12',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  // Depth-first from the start dot: the initial state on top, transitions back to it point up.
  'elk.layered.cycleBreaking.strategy': 'DEPTH_FIRST',
}

const stateId = (path: string) => `state:${path}`
const startId = (path: string) => `start:${path}`

function elkNode(graph: MachineGraph, node: GraphNode): ElkNode {
  const size = measureNode(node)
  if (!node.children.length) return { id: stateId(node.id), width: size.w, height: size.h }
  const children = node.children.map((child) => elkNode(graph, graph.nodes.get(child)!))
  if (node.initial) {
    children.unshift({
      id: startId(node.id),
      width: START,
      height: START,
      layoutOptions: { 'elk.layered.layering.layerConstraint': 'FIRST' },
    })
  }
  return {
    id: stateId(node.id),
    children,
    layoutOptions: {
      // Room for the compound state's name above its children.
      'elk.padding': `[top=${HEADER + 8},left=${PAD},bottom=${PAD},right=${PAD}]`,
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      'elk.nodeSize.minimum': `(${size.w + 2 * PAD}, ${HEADER + 8 + PAD})`,
    },
  }
}

interface Placed {
  boxes: Map<string, Box>
  /** Absolute origin of every ELK node, for coordinates given relative to a container. */
  origins: Map<string, Point>
}

function place(node: ElkNode, ox: number, oy: number, placed: Placed): void {
  const x = ox + (node.x ?? 0)
  const y = oy + (node.y ?? 0)
  placed.origins.set(node.id, { x, y })
  if (node.id.startsWith('state:'))
    placed.boxes.set(node.id.slice('state:'.length), { x, y, w: node.width!, h: node.height! })
  for (const child of node.children ?? []) place(child, x, y, placed)
}

function route(edge: ElkExtendedEdge, origin: Point): Point[] {
  const at = (p: Point) => ({ x: origin.x + p.x, y: origin.y + p.y })
  const points = (edge.sections ?? []).flatMap((s) => [
    at(s.startPoint),
    ...(s.bendPoints ?? []).map(at),
    at(s.endPoint),
  ])
  // An edge into a compound state comes in sections that meet at its border a fraction of a
  // pixel apart: snap those so the drawn route stays orthogonal.
  for (let i = 1; i < points.length; i++) {
    const [prev, point] = [points[i - 1], points[i]]
    if (Math.abs(point.x - prev.x) < 1) point.x = prev.x
    if (Math.abs(point.y - prev.y) < 1) point.y = prev.y
  }
  return points
}

/**
 * Lays out the whole machine.
 * @example const layout = await layoutMachine(machineGraph(machine)); layout.boxes.get('pending')
 */
export async function layoutMachine(graph: MachineGraph): Promise<Layout> {
  const root = graph.nodes.get('')!
  const edges: (ElkExtendedEdge & { route: { source: string; target: string; lines?: string[] } })[] = []
  for (const node of graph.nodes.values()) {
    if (!node.initial) continue
    const route = { source: startId(node.id), target: node.initial }
    edges.push({ id: `e${edges.length}`, sources: [startId(node.id)], targets: [stateId(node.initial)], route })
  }
  for (const edge of graph.edges) {
    const size = measureLabel(edge.labels)
    edges.push({
      id: `e${edges.length}`,
      sources: [stateId(edge.source)],
      targets: [stateId(edge.target)],
      labels: [{ text: edge.labels.join('\n'), width: size.w, height: size.h }],
      route: { source: edge.source, target: edge.target, lines: edge.labels },
    })
  }
  const rootNode = elkNode(graph, root)
  const input: ElkNode = {
    id: 'root',
    layoutOptions: ROOT_OPTIONS,
    children: rootNode.children,
    edges: edges.map(({ route: _, ...edge }) => edge),
  }
  const result = await elk.layout(input)
  const placed: Placed = { boxes: new Map(), origins: new Map() }
  place(result, 0, 0, placed)
  placed.boxes.delete('')
  const layout: Layout = { width: result.width!, height: result.height!, boxes: placed.boxes, starts: [], edges: [] }
  const metas = new Map(edges.map((edge) => [edge.id, edge.route]))
  for (const out of result.edges ?? []) {
    const meta = metas.get(out.id)!
    const origin = placed.origins.get(out.container ?? 'root') ?? { x: 0, y: 0 }
    const points = route(out, origin)
    if (meta.source.startsWith('start:')) {
      const dot = placed.origins.get(meta.source)!
      layout.starts.push({ id: meta.source, dot: { x: dot.x + START / 2, y: dot.y + START / 2 }, route: points })
      continue
    }
    const label = out.labels?.[0]
    layout.edges.push({
      source: meta.source,
      target: meta.target,
      points,
      label:
        label && meta.lines
          ? { x: origin.x + label.x!, y: origin.y + label.y!, w: label.width!, h: label.height!, lines: meta.lines }
          : undefined,
    })
  }
  return layout
}
