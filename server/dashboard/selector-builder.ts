import type { Selector, SelectorFunction } from '../firewall/schema'
import { SEVERITIES } from '../firewall/schema'
import { fieldId, inputField, selectField, textareaField, type FormErrors } from './forms'
import { html, type Html } from './html'
import type { Form } from './request'

/**
 * The rule selector builder: every rule selector the API accepts as form fields, nested for
 * `all`, `any` and `not`, with the resulting JSON shown beside it. A node at path `p` (`s`,
 * `s.0`, `s.0.1`, ...) posts `p.name`, its arguments as `p.<argument>` and its children as
 * `p.0`, `p.1`, ... The server reads the tree back from those names; CSS (`:has`) shows only
 * the fields of the chosen function, and "Add condition" / "Remove" re-render the draft on
 * the server, so the builder needs no script. The script only keeps the JSON preview live.
 */

type FunctionName = SelectorFunction['name']
type Argument = 'patterns' | 'package' | 'range' | 'duration' | 'licenseSet' | 'mode' | 'minSeverity' | 'minCvss'

/** Every selector function, its label and its arguments: a closed table, so a new one does not build until it is here. */
const FUNCTIONS: Record<FunctionName, { label: string; args: Argument[]; children?: 'many' | 'one' }> = {
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
const NAMES = Object.keys(FUNCTIONS) as FunctionName[]
const ARGUMENTS: Argument[] = [
  'patterns',
  'package',
  'range',
  'duration',
  'licenseSet',
  'mode',
  'minSeverity',
  'minCvss',
]

/** Nesting deeper than this is not offered (the JSON API takes any depth). */
const MAX_DEPTH = 5
const MAX_CHILDREN = 50
const SELECTOR_ROOT = 's'

/** A selector as the form holds it: raw strings, possibly invalid. */
export interface SelectorDraft {
  name: string
  args: Partial<Record<Argument, string>>
  children: SelectorDraft[]
}

const isFunction = (name: string): name is FunctionName => Object.hasOwn(FUNCTIONS, name)

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

interface BuilderOptions {
  licenseSets: { id: string; name: string }[]
  /** Where "Add condition" and "Remove" post the draft to be drawn again. */
  draftAction: string
}

function argumentField(
  errors: FormErrors,
  path: string,
  arg: Argument,
  value: string | undefined,
  options: BuilderOptions,
): Html {
  const name = `${path}.${arg}`
  const className = `arg arg-${arg}`
  switch (arg) {
    case 'patterns':
      return textareaField(errors, {
        label: 'Package name patterns',
        name,
        className,
        value,
        rows: 2,
        hint: html`One per line or comma-separated; <code>*</code> matches any run of characters,
          <code>@scope/*</code> a scope.`,
        attrs: html` class="mono" spellcheck="false"`,
      })
    case 'package':
      return inputField(errors, { label: 'Package', name, className, value, placeholder: 'lodash' })
    case 'range':
      return inputField(errors, {
        label: 'Version range',
        name,
        className,
        value,
        placeholder: '<4.17.21',
        hint: 'The ecosystem’s range syntax (semver for npm, PEP 440 for PyPI, Maven and NuGet ranges).',
      })
    case 'duration':
      return inputField(errors, {
        label: 'Minimum age',
        name,
        className,
        value,
        placeholder: '72h',
        hint: 'A duration such as 72h or 7d.',
      })
    case 'licenseSet':
      return selectField(errors, {
        label: 'License set',
        name,
        className,
        value,
        choices: [
          ['', 'Choose a license set…'],
          ...options.licenseSets.map((set) => [set.id, `${set.name} (${set.id})`] as [string, string]),
          ...(value && !options.licenseSets.some((s) => s.id === value) ? [[value, value] as [string, string]] : []),
        ],
      })
    case 'mode':
      return selectField(errors, {
        label: 'Mode',
        name,
        className,
        value: value || 'allow',
        choices: [
          ['allow', 'allow: block what the set does not allow'],
          ['deny', 'deny: block what the set contains'],
        ],
      })
    case 'minSeverity':
      return selectField(errors, {
        label: 'Minimum severity',
        name,
        className,
        value,
        choices: [['', 'any'], ...SEVERITIES.map((s) => [s, s] as [string, string])],
      })
    case 'minCvss':
      return inputField(errors, {
        label: 'Minimum CVSS score',
        name,
        className,
        value,
        type: 'number',
        attrs: html` min="0" max="10" step="0.1"`,
        hint: 'Optional, 0 to 10.',
      })
  }
}

function node(
  draft: SelectorDraft,
  path: string,
  depth: number,
  errors: FormErrors,
  options: BuilderOptions,
  removable: boolean,
): Html {
  const spec = isFunction(draft.name) ? FUNCTIONS[draft.name] : undefined
  const choices: [string, string][] = [
    ...(spec ? [] : [['', 'Choose a condition…'] as [string, string]]),
    ...NAMES.map((name) => [name, `${FUNCTIONS[name].label} (${name})`] as [string, string]),
  ]
  // A node that is not (yet) a combination gets one empty child, shown by CSS when it becomes one.
  const children =
    spec?.children === 'one' ? draft.children.slice(0, 1) : spec?.children === 'many' ? draft.children : []
  const shown = children.length || depth + 1 >= MAX_DEPTH ? children : [emptyDraft()]
  const id = `node-${fieldId(path)}`
  const intent = (kind: 'add' | 'remove', label: string, extra = '') =>
    html`<button
      type="submit"
      class="button small ${extra}"
      formaction="${options.draftAction}#${id}"
      formnovalidate
      name="intent"
      value="${kind}:${path}"
    >
      ${label}
    </button>`
  return html`<fieldset class="sel-node depth-${depth}" id="${id}" data-path="${path}">
    <legend>${depth === 0 ? 'Selector' : 'Condition'}</legend>
    <div class="sel-head">
      ${selectField(errors, { label: 'Matches when', name: `${path}.name`, value: draft.name, choices, attrs: html` data-selector-name` })}
    </div>
    <div class="sel-args">${ARGUMENTS.map((arg) => argumentField(errors, path, arg, draft.args[arg], options))}</div>
    <div class="sel-children">
      ${shown.map((child, i) => node(child, `${path}.${i}`, depth + 1, errors, options, children.length > 0))}
      ${depth + 1 < MAX_DEPTH ? intent('add', 'Add condition', 'sel-add') : ''}
    </div>
    ${removable ? html`<div class="actions">${intent('remove', 'Remove this condition', 'subtle')}</div>` : ''}
  </fieldset>`
}

/** The builder and the JSON it stands for. */
export function selectorBuilder(draft: SelectorDraft, errors: FormErrors, options: BuilderOptions): Html {
  const functions = JSON.stringify(
    Object.fromEntries(
      NAMES.map((name) => [name, { args: FUNCTIONS[name].args, children: FUNCTIONS[name].children ?? null }]),
    ),
  )
  return html`<div
    class="selector-builder"
    data-selector-builder="${SELECTOR_ROOT}"
    data-selector-functions="${functions}"
  >
    ${node(draft, SELECTOR_ROOT, 0, errors, options, false)}
    <div class="selector-json">
      <h3 id="selector-json-h">Selector JSON</h3>
      <pre class="code" tabindex="0" aria-labelledby="selector-json-h" data-testid="selector-json" data-selector-json>
${JSON.stringify(selectorOf(draft), null, 2)}</pre>
    </div>
  </div>`
}

/**
 * The builder's CSS, generated from the table above so that a new function or argument cannot be
 * forgotten there: only the chosen function's arguments show, and children only under a
 * combination. Browsers without `:has` show every field (the server ignores the others).
 */
export const SELECTOR_BUILDER_STYLE = `
@supports selector(:has(a)) {
  .sel-node > .sel-args > .arg, .sel-node > .sel-children { display: none; }
${NAMES.flatMap((name) => FUNCTIONS[name].args.map((arg) => `  .sel-node:has(> .sel-head option[value="${name}"]:checked) > .sel-args > .arg-${arg} { display: grid; }`)).join('\n')}
${NAMES.filter((name) => FUNCTIONS[name].children)
  .map((name) => `  .sel-node:has(> .sel-head option[value="${name}"]:checked) > .sel-children { display: grid; }`)
  .join('\n')}
  .sel-node:has(> .sel-head option[value="not"]:checked) > .sel-children > .sel-node ~ .sel-add { display: none; }
}
`
