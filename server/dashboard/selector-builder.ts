import { SEVERITIES } from '../firewall/schema'
import { fieldId, inputField, selectField, textareaField, type FormErrors } from './forms'
import { html, type Html } from './html'
import {
  ARGUMENTS,
  emptyDraft,
  FUNCTIONS,
  isFunction,
  MAX_DEPTH,
  NAMES,
  SELECTOR_ROOT,
  selectorOf,
  type Argument,
  type SelectorDraft,
} from './selector-draft'

/**
 * The rule selector builder: every rule selector the API accepts as form fields, nested for
 * `all`, `any` and `not`, with the resulting JSON shown beside it. A node at path `p` (`s`,
 * `s.0`, `s.0.1`, ...) posts `p.name`, its arguments as `p.<argument>` and its children as
 * `p.0`, `p.1`, ... The server reads the tree back from those names; CSS (`:has`) shows only
 * the fields of the chosen function, and "Add condition" / "Remove" re-render the draft on
 * the server, so the builder needs no script. The script only keeps the JSON preview live.
 */

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
