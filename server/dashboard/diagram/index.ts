import type { AnyStateMachine } from 'xstate'
import { layoutMachine } from './layout'
import { activePaths, machineGraph } from './machine-graph'
import { renderMachineSvg } from './svg'

export { activePaths, machineGraph } from './machine-graph'
export { layoutMachine } from './layout'
export { MACHINE_SVG_STYLE, renderMachineSvg } from './svg'

const cache = new WeakMap<AnyStateMachine, { graph: ReturnType<typeof machineGraph>; layout: ReturnType<typeof layoutMachine> }>()

/**
 * A machine drawn as SVG with the states of `value` (a snapshot's `value`) highlighted. The
 * graph and layout are computed once per machine definition.
 * @example drawMachine(exceptionRequestMachine, 'pending')
 */
export function drawMachine(machine: AnyStateMachine, value?: unknown, options: { title?: string; idPrefix?: string; standalone?: boolean } = {}): string {
  let drawn = cache.get(machine)
  if (!drawn) {
    const graph = machineGraph(machine)
    drawn = { graph, layout: layoutMachine(graph) }
    cache.set(machine, drawn)
  }
  return renderMachineSvg(drawn.graph, drawn.layout, { ...options, active: value === undefined ? [] : activePaths(value) })
}
