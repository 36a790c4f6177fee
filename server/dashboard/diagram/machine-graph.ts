import type { AnyStateMachine, AnyStateNode } from 'xstate'

/**
 * A machine definition as a plain graph: one node per state (ids are dotted paths from the
 * root, `''` is the root), one edge per (source, target) pair with every transition label
 * between them (source and target are the same state for a transition that stays in it).
 * Read from `machine.root`, so `always` transitions and invoke results are included
 * (xstate/graph's `toDirectedGraph` leaves eventless transitions out).
 */

export interface GraphNode {
  id: string
  key: string
  parent: string | null
  type: string
  children: string[]
  initial?: string
  /** Sources of invoked actors (shown inside the state). */
  invokes: string[]
  /** Events handled without leaving the state (shown as the state's tooltip). */
  internal: string[]
  /** Only eventless transitions leave it: a decision point the actor never rests in. */
  transient: boolean
}

export interface GraphEdge {
  source: string
  target: string
  labels: string[]
}

export interface MachineGraph {
  id: string
  nodes: Map<string, GraphNode>
  edges: GraphEdge[]
}

const pathOf = (node: AnyStateNode) => node.path.join('.')

interface GuardLike {
  type?: string
  name?: string
  guards?: unknown[]
}

/** A readable guard: named guards by name, `and`/`or`/`not` spelled out. */
function guardLabel(guard: unknown): string {
  if (!guard) return ''
  if (typeof guard === 'string') return guard
  const g = guard as GuardLike
  if (typeof guard === 'function' && Array.isArray(g.guards)) {
    const parts = g.guards.map(guardLabel)
    if (g.name === 'not') return `!${parts[0]}`
    return parts.join(g.name === 'or' ? ' || ' : ' && ')
  }
  return g.type ?? g.name ?? 'guard'
}

/** `xstate.done.actor.<id>` and friends, named after the invoked source instead. */
function eventLabel(eventType: string, invokes: Map<string, string>): string {
  if (eventType === '') return 'always'
  const done = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType)
  if (done) return `${done[1]}: ${invokes.get(done[2]) ?? done[2]}`
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType)
  if (after) return `after ${after[1]}`
  return eventType
}

function invokeSources(node: AnyStateNode): Map<string, string> {
  const result = new Map<string, string>()
  for (const invoke of node.invoke) result.set(invoke.id, typeof invoke.src === 'string' ? invoke.src : invoke.id)
  return result
}

/**
 * The graph of a machine definition.
 * @example machineGraph(exceptionRequestMachine).edges // [{ source: 'pending', target: 'approved', labels: [...] }, ...]
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const nodes = new Map<string, GraphNode>()
  const edges = new Map<string, GraphEdge>()
  const visit = (stateNode: AnyStateNode, parent: string | null) => {
    const id = pathOf(stateNode)
    const invokes = invokeSources(stateNode)
    const node: GraphNode = {
      id,
      key: parent === null ? machine.id : stateNode.key,
      parent,
      type: stateNode.type,
      children: [],
      initial: stateNode.initial?.target?.[0] ? pathOf(stateNode.initial.target[0]) : undefined,
      invokes: [...invokes.values()],
      internal: [],
      transient: Boolean(stateNode.always?.length) && stateNode.transitions.size === 0,
    }
    nodes.set(id, node)
    const transitions = [...(stateNode.always ?? []), ...[...stateNode.transitions.values()].flat()]
    for (const transition of transitions) {
      const event = eventLabel(transition.eventType, invokes)
      const guard = guardLabel(transition.guard)
      const label = guard ? `${event} [${guard}]` : event
      const target = transition.target?.[0]
      // Targetless transitions stay in the state: drawn as a loop, as the Mermaid export does.
      const to = target ? pathOf(target) : id
      if (to === id && !node.internal.includes(event)) node.internal.push(event)
      const key = `${id}\u0000${to}`
      const edge = edges.get(key) ?? { source: id, target: to, labels: [] }
      if (!edge.labels.includes(label)) edge.labels.push(label)
      edges.set(key, edge)
    }
    for (const child of Object.values(stateNode.states) as AnyStateNode[]) {
      node.children.push(pathOf(child))
      visit(child, id)
    }
  }
  visit(machine.root, null)
  return { id: machine.id, nodes, edges: [...edges.values()] }
}

/**
 * Every state path active in a snapshot value, outermost first.
 * @example activePaths({ delivering: 'sending' }) // ['delivering', 'delivering.sending']
 */
export function activePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value]
  if (!value || typeof value !== 'object') return []
  return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) => [
    prefix + key,
    ...activePaths(child, `${prefix}${key}.`),
  ])
}
