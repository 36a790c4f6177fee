import { ZodError } from 'zod'
import { DomainError, type FieldError } from '../../common/errors'
import { fieldErrors, toProblem } from '../../http/problem'
import { CreateExceptionRequestBody, createExceptionRequest } from '../../exception-requests'
import {
  blockedRequest,
  proposalFor,
  suggestedExceptionId,
  type BlockedRequest,
} from '../../exception-requests/from-block'
import { visibleFirewall } from '../../exception-requests/access'
import { EXCEPTION_REASONS } from '../../firewall/schema'
import { card, facts, heading } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * `/namespaces/{ns}/firewalls/{fw}/exception-requests/new?request=req-...`: where a block
 * message sends the developer. The form is pre-filled from the blocked request's log entry
 * (package, version, rule) and creates the request with the API's own domain function, so the
 * same permission (`fw:access`) and validation apply; invalid input comes back next to its field.
 */

/** What the form shows: the values (submitted or suggested) and the errors by field name. */
interface FormState {
  requestId?: string
  packageName: string
  version: string
  rule: string
  exceptionId: string
  reason: string
  expires: string
  justification: string
  errors: Map<string, string>
  /** The caller's pending request for the same proposal, when the submission duplicated it (409). */
  duplicateOf?: string
}

/** Zod/domain error paths of the create body, mapped to the form's field names. */
const FIELD_OF_PATH: [RegExp, string][] = [
  [/^proposedException\.selector\.packageName/, 'packageName'],
  [/^proposedException\.selector\.version/, 'version'],
  [/^proposedException\.selector/, 'packageName'],
  [/^proposedException\.rule/, 'rule'],
  [/^proposedException\.id/, 'exceptionId'],
  [/^proposedException\.reason/, 'reason'],
  [/^proposedException\.expires/, 'expires'],
  [/^justification/, 'justification'],
]

function errorsByField(errors: FieldError[]): Map<string, string> {
  const byField = new Map<string, string>()
  for (const error of errors) {
    const field = FIELD_OF_PATH.find(([pattern]) => pattern.test(error.path))?.[1] ?? 'form'
    if (!byField.has(field)) byField.set(field, error.message)
  }
  return byField
}

/** A labelled input with its error (if any) right below it, tied by aria-describedby. */
function field(
  state: FormState,
  name: keyof FormState & string,
  label: string,
  control: (attrs: Html) => Html,
  hint?: string,
  wide = false,
): Html {
  const error = state.errors.get(name)
  const ids = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ')
  const attrs = html` id="f-${name}"
  name="${name}"${ids ? html` aria-describedby="${ids}"` : ''}${error ? html` aria-invalid="true"` : ''}`
  return html`<div class="field${wide ? ' wide' : ''}${error ? ' has-error' : ''}">
    <label for="f-${name}">${label}</label>
    ${control(attrs)} ${hint ? html`<p class="small muted" id="${name}-hint">${hint}</p>` : ''}
    ${error ? html`<p class="field-error" id="${name}-error" role="alert">${error}</p>` : ''}
  </div>`
}

function renderForm(req: DashboardRequest, fw: string, state: FormState, block: BlockedRequest | null): Html {
  const { ns } = req.viewer
  const reasons = html`${html`<option value="">(not given)</option>`}${EXCEPTION_REASONS.map((r) => html`<option value="${r}" ${state.reason === r ? ' selected' : ''}>${r.replace(/_/g, ' ')}</option>`)}`
  const blocked = block
    ? card(
        'The blocked request',
        facts([
          ['Blocked request', html`<code>${block.requestId}</code>`],
          ['Package', html`<strong>${block.packageName}</strong><span class="muted">@${block.version}</span>`],
          ['Rule', html`<code>${block.rule}</code>`],
          ['Why', block.message],
          ['When', time(block.time)],
        ]),
        'blocked',
      )
    : state.requestId
      ? html`<div class="flash error" role="status">
          No blocked request <code>${state.requestId}</code> of yours is in the log of ${fw}; fill in the package and
          rule yourself.
        </div>`
      : ''
  const formError = state.errors.get('form')
  const form = html`<form
    method="post"
    action="${href('namespaces', ns, 'firewalls', fw, 'exception-requests', 'new')}"
    class="grid form-grid"
    novalidate
  >
    ${csrfField(req.viewer)}
    ${state.requestId ? html`<input type="hidden" name="request" value="${state.requestId}" />` : ''}
    ${formError ? html`<p class="field-error" role="alert">${formError}</p>` : ''}
    ${
      state.duplicateOf
        ? html`<p class="field-error" role="alert" data-testid="duplicate-request">
            You already have a pending request for this proposal:
            <a href="${href('namespaces', ns, 'firewalls', fw, 'exception-requests', state.duplicateOf)}"
              >${state.duplicateOf}</a
            >. Nothing new was created; follow that one, or withdraw it first.
          </p>`
        : ''
    }
    ${field(state, 'packageName', 'Package', (a) => html`<input${a} value="${state.packageName}" required maxlength="214"></input${a}>`)}
    ${field(state, 'version', 'Version', (a) => html`<input${a} value="${state.version}" maxlength="256"></input${a}>`, 'Empty: every version of the package.')}
    ${field(state, 'rule', 'Rule', (a) => html`<input${a} value="${state.rule}" required maxlength="128"></input${a}>`, 'The rule that blocked it.')}
    ${field(state, 'reason', 'Reason', (a) => html`<select${a}>${reasons}</select>`)}
    ${field(state, 'expires', 'Until (UTC, optional)', (a) => html`<input${a} type="date" value="${state.expires}"></input${a}>`)}
    ${field(state, 'exceptionId', 'Name on the firewall', (a) => html`<input${a} value="${state.exceptionId}" required maxlength="128"></input${a}>`, 'Filled in for you; how the firewall will list the exception once approved.')}
    ${field(state, 'justification', 'Justification', (a) => html`<textarea${a} rows="4" required maxlength="4000">${state.justification}</textarea>`, 'Why you need it: the reviewer reads this.', true)}
    <div class="actions"><button class="button primary" type="submit">Request exception</button></div>
  </form>`
  const body = html`${heading('Request an exception', '', html`On firewall <strong>${fw}</strong>. A reviewer approves, edits or denies it; you can follow it on its page.`)}
  ${blocked} ${card('Exception request', form, 'request-form')}`
  return layout({
    title: 'Request an exception',
    section: 'requests',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Exception requests', href('namespaces', ns, 'exception-requests')],
      [fw, href('namespaces', ns, 'firewalls', fw, 'exception-requests')],
    ],
    body,
  })
}

const emptyState = (requestId?: string): FormState => ({
  requestId,
  packageName: '',
  version: '',
  rule: '',
  exceptionId: '',
  reason: '',
  expires: '',
  justification: '',
  errors: new Map(),
})

/** GET: the form, pre-filled from `?request=` when the log has that block for this caller. */
export async function newExceptionRequestPage(req: DashboardRequest): Promise<Html> {
  const fw = req.params.fw
  const requestId = req.query.get('request')?.trim().slice(0, 200) || undefined
  await visibleFirewall(req.ctx, fw)
  const block = requestId ? await blockedRequest(req.ctx, fw, requestId) : null
  const state = emptyState(requestId)
  if (block) {
    const proposal = proposalFor(block)
    Object.assign(state, {
      packageName: block.packageName,
      version: block.version,
      rule: block.rule,
      exceptionId: proposal.id,
    })
  }
  return renderForm(req, fw, state, block)
}

function stateOf(form: Form): FormState {
  const text = (name: string) => form.get(name)?.trim() ?? ''
  return {
    ...emptyState(text('request') || undefined),
    packageName: text('packageName'),
    version: text('version'),
    rule: text('rule'),
    exceptionId: text('exceptionId'),
    reason: text('reason'),
    expires: text('expires'),
    justification: text('justification'),
  }
}

/** A `date` input (YYYY-MM-DD) as the end of that day in UTC; other text passes through to fail validation. */
const expiresOf = (value: string) => (/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T23:59:59Z` : value)

/** POST: creates the request (same domain call as the API) or shows the form again with errors by field. */
export async function createExceptionRequestAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const fw = req.params.fw
  const state = stateOf(form)
  const proposedException = {
    id: state.exceptionId || suggestedExceptionId(state.packageName, state.version),
    rule: state.rule,
    selector: { packageName: state.packageName, ...(state.version ? { version: state.version } : {}) },
    ...(state.reason ? { reason: state.reason } : {}),
    ...(state.expires ? { expires: expiresOf(state.expires) } : {}),
    ...(state.requestId ? { notes: `Requested after the block of request ${state.requestId}` } : {}),
  }
  try {
    const body = CreateExceptionRequestBody.parse({ proposedException, justification: state.justification })
    const created = await createExceptionRequest(req.ctx, fw, body)
    return {
      redirect: href('namespaces', req.viewer.ns, 'firewalls', fw, 'exception-requests', created.id),
      flash: `Your request was created. A reviewer of ${fw} will decide on it; this page shows where it stands.`,
    }
  } catch (error) {
    if (error instanceof DomainError && error.code === 'duplicate_exception_request') {
      state.duplicateOf = String(error.details.extra?.pendingRequestId)
      const block = state.requestId ? await blockedRequest(req.ctx, fw, state.requestId) : null
      return { page: renderForm(req, fw, state, block), status: 409, problem: toProblem(error).problem }
    }
    const errors =
      error instanceof ZodError
        ? fieldErrors(error)
        : error instanceof DomainError && error.kind === 'invalid'
          ? (error.details.errors ?? [{ path: 'form', message: error.message }])
          : null
    if (!errors) throw error
    state.errors = errorsByField(errors)
    const block = state.requestId ? await blockedRequest(req.ctx, fw, state.requestId) : null
    return { page: renderForm(req, fw, state, block), status: 400 }
  }
}
