/**
 * Writes every XState machine exported by `machines/*.machine.ts` as a Mermaid state diagram
 * (`docs/machines/<file>.md`), drawn from the machine's own config: states (nested), event,
 * `always`, `after` and invoke done/error transitions with guards and actions, and invoked actors.
 *   npm run machines:export   (tsx scripts/export-machines.ts)
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AnyStateMachine } from 'xstate'
import { drawMachine } from '../server/dashboard/diagram'

interface Named {
  type?: string
  src?: string
}
type TransitionConfig = string | { target?: string | string[]; guard?: unknown; actions?: unknown } | undefined
interface StateConfig {
  id?: string
  initial?: string
  type?: string
  states?: Record<string, StateConfig>
  on?: Record<string, TransitionConfig | TransitionConfig[]>
  always?: TransitionConfig | TransitionConfig[]
  after?: Record<string, TransitionConfig | TransitionConfig[]>
  invoke?: InvokeConfig | InvokeConfig[]
}
interface InvokeConfig {
  src: string | Named
  onDone?: TransitionConfig | TransitionConfig[]
  onError?: TransitionConfig | TransitionConfig[]
}

const MACHINES_DIR = resolve('machines')
const OUT_DIR = resolve('docs/machines')

const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])
const nameOf = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : typeof value === 'function'
      ? value.name || 'inline'
      : ((value as Named)?.type ?? (value as Named)?.src ?? 'inline')
const nodeId = (path: string[]) => (path.length ? path.join('_').replace(/[^A-Za-z0-9_]/g, '_') : 'root')

/** Resolves a transition target to a state path, relative to the source state's parent. */
function resolveTarget(target: string, source: string[], machineId: string): string[] {
  if (target.startsWith('#')) {
    const [id, ...rest] = target.slice(1).split('.')
    return id === machineId ? rest : rest
  }
  if (target.startsWith('.')) return [...source, ...target.slice(1).split('.')]
  return [...source.slice(0, -1), ...target.split('.')]
}

function label(trigger: string, transition: Exclude<TransitionConfig, string | undefined> | null): string {
  const guard = transition?.guard ? ` [${nameOf(transition.guard)}]` : ''
  const actions = list(transition?.actions as unknown).map(nameOf)
  return `${trigger}${guard}${actions.length ? ` / ${actions.join(', ')}` : ''}`.replace(/:/g, '')
}

/** Mermaid lines for one state and its children. */
function render(config: StateConfig, path: string[], machineId: string, indent: string): string[] {
  const lines: string[] = []
  const children = Object.entries(config.states ?? {})
  for (const [name, child] of children) {
    const childPath = [...path, name]
    const id = nodeId(childPath)
    if (child.states) {
      lines.push(`${indent}state "${name}" as ${id} {`)
      lines.push(...render(child, childPath, machineId, indent + '  '))
      lines.push(`${indent}}`)
    } else lines.push(`${indent}state "${name}" as ${id}`)
    if (child.type === 'final') lines.push(`${indent}${id} --> [*]`)
    const invokes = list(child.invoke)
    if (invokes.length)
      lines.push(`${indent}note right of ${id} : invokes ${invokes.map((inv) => nameOf(inv.src)).join(', ')}`)
  }
  if (config.initial) lines.push(`${indent}[*] --> ${nodeId([...path, config.initial])}`)
  for (const [name, child] of children) lines.push(...edges(child, [...path, name], machineId, indent))
  return lines
}

function edges(config: StateConfig, path: string[], machineId: string, indent: string): string[] {
  const lines: string[] = []
  const from = nodeId(path)
  const add = (trigger: string, transitions: TransitionConfig | TransitionConfig[]) => {
    for (const transition of list(transitions)) {
      const object = typeof transition === 'string' ? { target: transition } : (transition ?? {})
      const targets = list(object.target)
      for (const target of targets.length ? targets : [null]) {
        const to = target === null ? from : nodeId(resolveTarget(target, path, machineId))
        lines.push(`${indent}${from} --> ${to} : ${label(trigger, object)}`)
      }
    }
  }
  for (const [event, transitions] of Object.entries(config.on ?? {})) add(event, transitions)
  if (config.always) add('always', config.always)
  for (const [delay, transitions] of Object.entries(config.after ?? {})) add(`after ${delay}`, transitions)
  for (const invoke of list(config.invoke)) {
    if (invoke.onDone) add(`done ${nameOf(invoke.src)}`, invoke.onDone)
    if (invoke.onError) add(`error ${nameOf(invoke.src)}`, invoke.onError)
  }
  return lines
}

/** The Mermaid diagram of one machine. */
export function toMermaid(config: StateConfig): string {
  return ['stateDiagram-v2', ...render(config, [], config.id ?? 'machine', '  ')].join('\n')
}

async function main() {
  mkdirSync(OUT_DIR, { recursive: true })
  for (const file of readdirSync(MACHINES_DIR).filter((name) => name.endsWith('.machine.ts'))) {
    const module = (await import(pathToFileURL(join(MACHINES_DIR, file)).href)) as Record<string, unknown>
    for (const [exportName, value] of Object.entries(module)) {
      const machine = value as { config?: StateConfig; id?: string; root?: unknown }
      if (!machine || typeof machine !== 'object' || !machine.config || !machine.root) continue
      const diagram = toMermaid(machine.config)
      const out = join(OUT_DIR, `${basename(file, '.ts')}.md`)
      // The SVG is the dashboard's own drawing (server/dashboard/diagram), so review and runtime match.
      const svg = join(OUT_DIR, `${basename(file, '.ts')}.svg`)
      writeFileSync(
        svg,
        `${await drawMachine(value as AnyStateMachine, undefined, { title: `${exportName} (machines/${file})`, standalone: true })}\n`,
      )
      writeFileSync(
        out,
        `# ${exportName}\n\nGenerated from \`machines/${file}\` by \`npm run machines:export\`; do not edit.\n\n![${exportName}](./${basename(svg)})\n\n\`\`\`mermaid\n${diagram}\n\`\`\`\n`,
      )
      console.log(`wrote ${out} and ${svg}`)
    }
  }
}

void main().catch((error) => {
  console.error(error)
  process.exit(1)
})
