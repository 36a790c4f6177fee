import type { AnyStateMachine } from 'xstate'
import { layoutMachine } from './layout'
import { activePaths, machineGraph } from './machine-graph'
import { renderMachineSvg } from './svg'

export { activePaths, machineGraph } from './machine-graph'
export { layoutMachine } from './layout'
export { MACHINE_SVG_STYLE, renderMachineSvg } from './svg'

interface Drawn {
  graph: ReturnType<typeof machineGraph>
  layout: Awaited<ReturnType<typeof layoutMachine>>
}

const cache = new WeakMap<AnyStateMachine, Promise<Drawn>>()

/**
 * A machine drawn as SVG with the states of `value` (a snapshot's `value`) highlighted. The
 * graph and layout are computed once per machine definition.
 * @example await drawMachine(exceptionRequestMachine, 'pending')
 */
export async function drawMachine(
  machine: AnyStateMachine,
  value?: unknown,
  options: { title?: string; idPrefix?: string; standalone?: boolean } = {},
): Promise<string> {
  let drawn = cache.get(machine)
  if (!drawn) {
    const graph = machineGraph(machine)
    drawn = layoutMachine(graph).then((layout) => ({ graph, layout }))
    // A failed layout is not kept: the next page view tries again.
    drawn.catch(() => cache.delete(machine))
    cache.set(machine, drawn)
  }
  const { graph, layout } = await drawn
  return renderMachineSvg(graph, layout, { ...options, active: value === undefined ? [] : activePaths(value) })
}
