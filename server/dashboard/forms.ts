import { toProblem, type Problem } from '../http/problem'
import type { ActionResult } from './handler'
import { html, type Html, type Renderable } from './html'

/**
 * Form fields that show their validation errors beside them. A refused form post is answered
 * with the same form, the values the user typed and the problem's field errors mapped onto the
 * fields (RFC 9457 `errors[].path` -> form field name), instead of an error page.
 */

/** Errors of one submitted form: per field name, plus those that belong to no field. */
export class FormErrors {
  private readonly byField = new Map<string, string[]>()
  readonly general: string[] = []

  add(field: string | undefined, message: string): void {
    if (field === undefined) {
      this.general.push(message)
      return
    }
    const list = this.byField.get(field) ?? []
    list.push(message)
    this.byField.set(field, list)
  }

  of(field: string): string[] {
    return this.byField.get(field) ?? []
  }

  get empty(): boolean {
    return this.general.length === 0 && this.byField.size === 0
  }

  /** Every message with its field, for the summary at the top of the form. */
  all(): { field?: string; message: string }[] {
    return [
      ...this.general.map((message) => ({ message })),
      ...[...this.byField].flatMap(([field, messages]) => messages.map((message) => ({ field, message }))),
    ]
  }

  /**
   * A problem's field errors placed on form fields by `fieldOf` (undefined: no field, shown in
   * the summary). A problem without field errors (403, 409, 412) becomes one general message.
   */
  static fromProblem(problem: Problem, fieldOf: (path: string) => string | undefined): FormErrors {
    const errors = new FormErrors()
    if (!problem.errors?.length) errors.add(undefined, problem.detail)
    for (const error of problem.errors ?? []) {
      const field = fieldOf(error.path)
      errors.add(field, field === undefined ? `${error.path}: ${error.message}` : error.message)
    }
    return errors
  }
}

export const NO_ERRORS = new FormErrors()

/** Statuses a form answers in place; anything else (404, 5xx) stays an error page. */
const IN_PLACE = new Set([400, 403, 409, 412])

/**
 * Runs a form's domain call; a refusal the user can correct comes back as the form, rendered by
 * `render` with the errors, under the problem's status (the action audits it as a failure).
 */
export async function orInPlace(
  run: () => Promise<ActionResult>,
  fieldOf: (path: string) => string | undefined,
  render: (errors: FormErrors, stale: boolean) => Promise<Html>,
): Promise<ActionResult> {
  try {
    return await run()
  } catch (error) {
    const { problem } = toProblem(error)
    if (!IN_PLACE.has(problem.status)) throw error
    // 412: the form was drawn from an older version. It comes back on the current one, input kept.
    const stale = problem.status === 412
    const shown = stale
      ? {
          ...problem,
          detail: `This changed since the form was opened (${problem.detail}). Your input is kept: review it and save again.`,
        }
      : problem
    return { page: await render(FormErrors.fromProblem(shown, fieldOf), stale), status: problem.status, problem }
  }
}

/** A DOM id for a field name (names hold dots and brackets). */
export const fieldId = (name: string): string => `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`

function errorText(errors: FormErrors, name: string): Html | '' {
  const messages = errors.of(name)
  return messages.length ? html`<p class="field-error" id="${fieldId(name)}-err">${messages.join('; ')}</p>` : ''
}

interface FieldOptions {
  label: string
  name: string
  hint?: Renderable
  /** Extra attributes for the control, already safe markup. */
  attrs?: Html
  className?: string
}

/** The attributes tying a control to its hint and error. */
function described(errors: FormErrors, name: string, hint: Renderable): Html {
  const ids = [hint ? `${fieldId(name)}-hint` : '', errors.of(name).length ? `${fieldId(name)}-err` : ''].filter(
    Boolean,
  )
  return html`${ids.length ? html` aria-describedby="${ids.join(' ')}"` : ''}${errors.of(name).length ? html` aria-invalid="true"` : ''}`
}

function wrap(errors: FormErrors, options: FieldOptions, control: Html): Html {
  const hint = options.hint
    ? html`<p class="hint small muted" id="${fieldId(options.name)}-hint">${options.hint}</p>`
    : ''
  return html`<div
    class="field${options.className ? ` ${options.className}` : ''}${errors.of(options.name).length ? ' has-error' : ''}"
  >
    <label for="${fieldId(options.name)}">${options.label}</label>${control}${hint}${errorText(errors, options.name)}
  </div>`
}

/** A text-like input (`type` text, url, number, password, datetime-local ...). */
export function inputField(
  errors: FormErrors,
  options: FieldOptions & { value?: string; type?: string; required?: boolean; placeholder?: string },
): Html {
  return wrap(
    errors,
    options,
    html`<input
      id="${fieldId(options.name)}"
      name="${options.name}"
      type="${options.type ?? 'text'}"
      value="${options.value ?? ''}"
      ${options.required ? ' required' : ''}${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}${described(errors, options.name, options.hint)}${options.attrs ?? ''}
    />`,
  )
}

export function textareaField(
  errors: FormErrors,
  options: FieldOptions & { value?: string; rows?: number; placeholder?: string },
): Html {
  return wrap(
    errors,
    options,
    html`<textarea
      id="${fieldId(options.name)}"
      name="${options.name}"
      rows="${options.rows ?? 3}"
      ${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}${described(errors, options.name, options.hint)}${options.attrs ?? ''}
    >
${options.value ?? ''}</textarea>`,
  )
}

export function selectField(
  errors: FormErrors,
  options: FieldOptions & { value?: string; choices: [value: string, label: string][] },
): Html {
  const choices = options.choices.map(
    ([value, label]) => html`<option value="${value}" ${value === options.value ? ' selected' : ''}>${label}</option>`,
  )
  return wrap(
    errors,
    options,
    html`<select
      id="${fieldId(options.name)}"
      name="${options.name}"
      ${described(errors, options.name, options.hint)}${options.attrs ?? ''}
    >
      ${choices}
    </select>`,
  )
}

/** A checkbox posting `value` (default `true`) when checked, with its error below. */
export function checkField(
  errors: FormErrors,
  options: { label: Renderable; name: string; checked: boolean; value?: string },
): Html {
  return html`<div class="field check-field">
    <label class="check"
      ><input
        type="checkbox"
        name="${options.name}"
        value="${options.value ?? 'true'}"
        ${options.checked ? ' checked' : ''}${described(errors, options.name, '')}
      />
      ${options.label}</label
    >${errorText(errors, options.name)}
  </div>`
}

/** The list of everything that went wrong, at the top of the form (the first thing a screen reader hears). */
export function errorSummary(errors: FormErrors): Html | '' {
  if (errors.empty) return ''
  const items = errors
    .all()
    .map(({ field, message }) => html`<li>${field ? html`<a href="#${fieldId(field)}">${message}</a>` : message}</li>`)
  return html`<div class="form-errors" role="alert" data-testid="form-errors">
    <p><strong>Nothing was saved.</strong> Correct the marked fields and try again.</p>
    <ul>
      ${items}
    </ul>
  </div>`
}

/** A `datetime-local` value (UTC) from an ISO timestamp, and back. */
export function localFromIso(iso: string | undefined): string {
  if (!iso) return ''
  const time = Date.parse(iso)
  return Number.isNaN(time) ? iso : new Date(time).toISOString().slice(0, 19).replace(/:00$/, '')
}

export function isoFromLocal(value: string | undefined): string | undefined {
  if (!value) return undefined
  // datetime-local sends `YYYY-MM-DDTHH:MM[:SS]`; the form labels it UTC.
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(value)) return `${value}:00Z`
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(value)) return `${value}Z`
  return value
}
