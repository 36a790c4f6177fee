import { EXCEPTION_REASONS, type Exception } from '../firewall/schema'
import {
  checkField,
  inputField,
  isoFromLocal,
  localFromIso,
  selectField,
  textareaField,
  type FormErrors,
} from './forms'
import { html, type Html } from './html'
import type { Form } from './request'

/**
 * The fields of one exception, shared by the exception form of a firewall and the
 * approve form of an exception request (which shows the proposal in them).
 */

export interface ExceptionValues {
  id: string
  rule: string
  packageName: string
  packageVersion: string
  /** `datetime-local` value, UTC. */
  expires: string
  reason: string
  notes: string
  log: boolean
}

export const exceptionValuesOf = (ex: Exception): ExceptionValues => ({
  id: ex.id,
  rule: ex.rule,
  packageName: ex.selector.packageName,
  packageVersion: ex.selector.version ?? '',
  expires: localFromIso(ex.expires),
  reason: ex.reason ?? '',
  notes: ex.notes ?? '',
  log: ex.log,
})

export const exceptionValuesFrom = (form: Form): ExceptionValues => ({
  id: form.text('id') ?? '',
  rule: form.text('rule') ?? '',
  packageName: form.text('packageName') ?? '',
  packageVersion: form.text('packageVersion') ?? '',
  expires: form.text('expires') ?? '',
  reason: form.text('reason') ?? '',
  notes: form.get('notes') ?? '',
  log: form.get('log') === 'true',
})

/** The exception the fields stand for (unvalidated: the domain's schema judges it). */
export function exceptionOf(values: ExceptionValues): Record<string, unknown> {
  return {
    id: values.id,
    rule: values.rule,
    selector: { packageName: values.packageName, ...(values.packageVersion ? { version: values.packageVersion } : {}) },
    log: values.log,
    ...(values.expires ? { expires: isoFromLocal(values.expires) } : {}),
    ...(values.reason ? { reason: values.reason } : {}),
    ...(values.notes.trim() ? { notes: values.notes } : {}),
  }
}

/** Does the form hold exactly `ex` (an `expires` written another way but naming the same instant counts as equal)? */
export function sameException(values: ExceptionValues, ex: Exception): boolean {
  const mine = exceptionValuesOf(ex)
  const sameTime =
    Date.parse(isoFromLocal(values.expires) ?? '') === Date.parse(ex.expires ?? '') || values.expires === mine.expires
  return (
    sameTime &&
    values.id === mine.id &&
    values.rule === mine.rule &&
    values.packageName === mine.packageName &&
    values.packageVersion === mine.packageVersion &&
    values.reason === mine.reason &&
    values.notes === mine.notes &&
    values.log === mine.log
  )
}

const FIELDS: Record<string, keyof ExceptionValues> = {
  id: 'id',
  rule: 'rule',
  'selector.packageName': 'packageName',
  'selector.version': 'packageVersion',
  selector: 'packageName',
  expires: 'expires',
  reason: 'reason',
  notes: 'notes',
  log: 'log',
}

/** `exception.selector.version`, `exceptions[2].rule` or `expires` to the field that shows it. */
export function exceptionField(path: string): string | undefined {
  const inner = path.replace(/^(?:exceptions\[\d+\]\.|exception\.)/, '')
  return Object.hasOwn(FIELDS, inner) ? FIELDS[inner] : undefined
}

/** The fields; `idEditable` false shows the id as text (an edited exception keeps its id). */
export function exceptionFields(
  errors: FormErrors,
  values: ExceptionValues,
  ruleIds: string[],
  idEditable: boolean,
): Html {
  const rules = [...new Set([...ruleIds, ...(values.rule ? [values.rule] : [])])]
  return html`<div class="grid form-grid">
    ${
      idEditable
        ? inputField(errors, {
            label: 'Name on the firewall',
            name: 'id',
            value: values.id,
            required: true,
            hint: 'How the firewall lists this exception; no other exception of the firewall may have it.',
          })
        : html`<div class="field">
            <span class="muted small">Name on the firewall</span><code>${values.id}</code
            ><input type="hidden" name="id" value="${values.id}" />
          </div>`
    }
    ${selectField(errors, { label: 'Rule it applies to', name: 'rule', value: values.rule, choices: [['', 'Choose a rule…'], ...rules.map((id) => [id, id] as [string, string])] })}
    ${inputField(errors, { label: 'Package name', name: 'packageName', value: values.packageName, required: true, hint: 'A name or a glob such as @acme/*.' })}
    ${inputField(errors, { label: 'Package version', name: 'packageVersion', value: values.packageVersion, hint: 'Empty: every version.' })}
    ${inputField(errors, { label: 'Expires (UTC)', name: 'expires', type: 'datetime-local', value: values.expires, hint: 'Empty: never. The exception stops applying at this time.' })}
    ${selectField(errors, { label: 'Reason', name: 'reason', value: values.reason, choices: [['', '—'], ...EXCEPTION_REASONS.map((r) => [r, r.replace(/_/g, ' ')] as [string, string])] })}
    ${textareaField(errors, { label: 'Notes', name: 'notes', value: values.notes, rows: 2 })}
    ${checkField(errors, { label: 'Log requests this exception lets through', name: 'log', checked: values.log })}
  </div>`
}
