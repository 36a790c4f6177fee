import type { Selector, SelectorFunction } from '../firewall/schema'
import type { Form } from './request'

/**
 * The selector builder's draft: a rule selector as the form holds it (raw strings, possibly
 * invalid), read from and turned into the API's JSON, and edited by the builder's buttons.
 * Pure; selector-builder.ts draws it.
 */

export type FunctionName = SelectorFunction['name']
export type Argument = 'patterns' | 'package' | 'range' | 'duration' | 'licenseSet' | 'mode' | 'minSeverity' | 'minCvss'

/** Every selector function, its label and its arguments: a closed table, so a new one does not build until it is here. */
export const FUNCTIONS: Record<FunctionName, { label: string; args: Argument[]; children?: 'many' | 'one' }> = {
  packageName: { label: 'Package name matches a pattern', args: ['patterns'] },
  versionRange: { label: 'Version is in a range', args: ['package', 'range'] },
  minimumAge: { label: 'Published less than a duration ago', args: ['duration'] },
  license: { label: 'License is (not) in a license set', args: ['licenseSet', 'mode'] },
  deprecated: { label: 'Version is deprecated', args: [] },
  installScripts: { label: 'Version has install scripts', args: [] },
  vulnerability: { label: 'A known vulnerability affects it', args: ['minSeverity', 'minCvss'] },
  malware: { label: 'A malware report names it', args: [] },
  all: { label: 'All of the conditions below', args: [], children: 'many' },
  any: { label: 'Any of the conditions below', args: [], children: 'many' },
  not: { label: 'Not the condition below', args: [], children: 'one' },
}
export const NAMES = Object.keys(FUNCTIONS) as FunctionName[]
export const ARGUMENTS: Argument[] = [
  'patterns',
  'package',
  'range',
  'duration',
  'licenseSet',
  'mode',
  'minSeverity',
  'minCvss',
]

/** Nesting deeper than this is not offered (the JSON API takes up to MAX_SELECTOR_DEPTH). */
export const MAX_DEPTH = 5
const MAX_CHILDREN = 50
export const SELECTOR_ROOT = 's'

/** A selector as the form holds it: raw strings, possibly invalid. */
export interface SelectorDraft {
  name: string
  args: Partial<Record<Argument, string>>
  children: SelectorDraft[]
}

export const isFunction = (name: string): name is FunctionName => Object.hasOwn(FUNCTIONS, name)

export const emptyDraft = (name = ''): SelectorDraft => ({ name, args: {}, children: [] })

/** The draft of a stored selector. */
export function draftOf(selector: Selector): SelectorDraft {
  const fn = selector.function as SelectorFunction & Record<string, unknown>
  const args: SelectorDraft['args'] = {}
  for (const arg of ARGUMENTS) {
    const value = fn[arg]
    if (value !== undefined) args[arg] = Array.isArray(value) ? value.join('\n') : String(value)
  }
  const children =
    fn.name === 'all' || fn.name === 'any' ? fn.selectors.map(draftOf) : fn.name === 'not' ? [draftOf(fn.selector)] : []
  return { name: fn.name, args, children }
}

/** Reads the node at `path` back from a submitted form. */
export function readDraft(form: Form, path = SELECTOR_ROOT, depth = 0): SelectorDraft {
  const args: SelectorDraft['args'] = {}
  for (const arg of ARGUMENTS) {
    const value = form.get(`${path}.${arg}`)
    if (value !== undefined) args[arg] = value
  }
  const children: SelectorDraft[] = []
  if (depth < MAX_DEPTH) {
    for (let i = 0; i < MAX_CHILDREN && form.get(`${path}.${i}.name`) !== undefined; i++)
      children.push(readDraft(form, `${path}.${i}`, depth + 1))
  }
  return { name: form.get(`${path}.name`) ?? '', args, children }
}

const list = (value: string | undefined) => (value ?? '').split(/[\s,]+/).filter(Boolean)

/** The selector JSON a draft stands for; validation (zod, then the domain) judges it. */
export function selectorOf(draft: SelectorDraft): unknown {
  const fn: Record<string, unknown> = { name: draft.name }
  const spec = isFunction(draft.name) ? FUNCTIONS[draft.name] : undefined
  for (const arg of spec?.args ?? []) {
    const value = draft.args[arg]?.trim() ?? ''
    if (arg === 'patterns') fn.patterns = list(value)
    else if (arg === 'minSeverity') {
      if (value) fn.minSeverity = value
    } else if (arg === 'minCvss') {
      if (value) fn.minCvss = Number(value)
    } else fn[arg] = value
  }
  if (spec?.children === 'many') fn.selectors = draft.children.map(selectorOf)
  if (spec?.children === 'one' && draft.children[0]) fn.selector = selectorOf(draft.children[0])
  return { function: fn }
}

/**
 * Applies an "Add condition" (`add:<path>`) or "Remove" (`remove:<path>`) button to the draft.
 * Unknown or malformed intents leave it unchanged.
 */
export function applyIntent(root: SelectorDraft, intent: string): SelectorDraft {
  const match = /^(add|remove):s((?:\.\d{1,3})*)$/.exec(intent)
  if (!match) return root
  const indexes = match[2].split('.').filter(Boolean).map(Number)
  const copy = structuredClone(root)
  if (match[1] === 'add') {
    const node = nodeAt(copy, indexes)
    if (node && node.children.length < MAX_CHILDREN) node.children.push(emptyDraft())
    return copy
  }
  const parent = nodeAt(copy, indexes.slice(0, -1))
  if (parent && indexes.length) parent.children.splice(indexes.at(-1)!, 1)
  return copy
}

function nodeAt(root: SelectorDraft, indexes: number[]): SelectorDraft | undefined {
  let node: SelectorDraft | undefined = root
  for (const index of indexes) node = node?.children[index]
  return node
}

/**
 * The form field of a validation error path, as the API reports them for a rule body
 * (`selector.function.selectors[1].function.range`) or inside a firewall
 * (`rules[3].selector...`): `s.1.range`. Node-level errors land on the node's function select.
 */
export function selectorField(path: string, root = SELECTOR_ROOT): string | undefined {
  const start = /^(?:rules\[\d+\]\.)?selector(.*)$/.exec(path)
  if (!start) return undefined
  let rest = start[1]
  let field = root
  for (;;) {
    const many = /^\.function\.selectors\[(\d+)\](.*)$/.exec(rest)
    if (many) {
      field += `.${many[1]}`
      rest = many[2]
      continue
    }
    const one = /^\.function\.selector(\..*|)$/.exec(rest)
    if (one && one[1] !== '') {
      field += '.0'
      rest = one[1]
      continue
    }
    const arg = /^\.function\.(\w+)/.exec(rest)
    if (arg && (ARGUMENTS as string[]).includes(arg[1])) return `${field}.${arg[1]}`
    return `${field}.name`
  }
}
