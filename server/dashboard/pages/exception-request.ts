import {
  ApproveBody,
  approveExceptionRequest,
  denyExceptionRequest,
  getExceptionRequest,
  withdrawExceptionRequest,
  type ExceptionRequestView,
} from '../../exception-requests'
import { getFirewall } from '../../firewall/queries'
import type { Exception } from '../../firewall/schema'
import {
  exceptionField,
  exceptionFields,
  exceptionOf,
  exceptionValuesFrom,
  exceptionValuesOf,
  sameException,
  type ExceptionValues,
} from '../exception-fields'
import { errorSummary, NO_ERRORS, orInPlace, textareaField, type FormErrors } from '../forms'
import { card, facts, heading, status } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { csrfField, layout } from '../layout'
import { factsPanel } from '../facts-panel'
import { requestSteps } from '../request-steps'
import { proposalFields, requestStateInWords } from '../request-words'
import { gatherPackageFacts } from '../../exception-requests/package-facts-gather'
import type { Form } from '../request'

/**
 * `/namespaces/{ns}/firewalls/{fw}/exception-requests/{id}` (the `dashboardUrl` of events): the
 * request, its machine with the live state, and the decisions the viewer may take now. The
 * forms appear only when the request's own `canApprove`/`canDeny`/`canWithdraw` say so; the
 * actions call the same domain functions as the API, so a forged post is refused the same way.
 */

const requestPath = (ns: string, fw: string, id: string, ...rest: string[]) =>
  href('namespaces', ns, 'firewalls', fw, 'exception-requests', id, ...rest)

/** The approve form: the proposal in fields; unchanged, it approves the proposal as is. */
async function approveCard(
  req: DashboardRequest,
  request: ExceptionRequestView,
  values: ExceptionValues,
  errors: FormErrors,
) {
  const base = requestPath(req.viewer.ns, req.params.fw, request.id)
  const ruleIds = await firewallRuleIds(req)
  return card(
    'Approve',
    html`<form method="post" action="${base}/approve" class="stack" novalidate>
      ${csrfField(req.viewer)} ${errorSummary(errors)}
      <p class="small muted">
        The exception to add, filled in from the proposal. Narrow the package, version or expiry if needed; approving it
        unchanged approves the proposal as is.
      </p>
      ${exceptionFields(errors, values, ruleIds, true)}
      ${textareaField(errors, { label: 'Comment for the requester', name: 'comment', rows: 2 })}
      <div class="actions"><button class="button primary" type="submit">Approve and add exception</button></div>
    </form>`,
    'approve',
  )
}

/** Rule ids of the firewall (the request's rule is added by the fields when it is not among them). */
async function firewallRuleIds(req: DashboardRequest): Promise<string[]> {
  try {
    return (await getFirewall(req.ctx, req.params.fw)).rules.map((rule) => rule.id)
  } catch {
    return [] // a requester without fw:read sees no approve form anyway
  }
}

export async function exceptionRequestPage(
  req: DashboardRequest,
  approval?: { values: ExceptionValues; errors: FormErrors },
) {
  const { ns } = req.viewer
  const { fw, id } = req.params
  const request = await getExceptionRequest(req.ctx, fw, id)
  const base = requestPath(ns, fw, id)
  const approve = request.canApprove
    ? await approveCard(
        req,
        request,
        approval?.values ?? exceptionValuesOf(request.proposedException),
        approval?.errors ?? NO_ERRORS,
      )
    : ''
  const deny = request.canDeny
    ? card(
        'Deny',
        html`<form method="post" action="${base}/deny" class="stack">
          ${csrfField(req.viewer)}
          <label>Why is it denied? <textarea name="comment" rows="3"></textarea></label>
          <div class="actions"><button class="button danger" type="submit">Deny request</button></div>
        </form>`,
        'deny',
      )
    : ''
  const withdraw = request.canWithdraw
    ? card(
        'Withdraw',
        html`<form method="post" action="${base}/withdraw" class="inline" data-confirm="Withdraw this request?">
          ${csrfField(req.viewer)}
          <p class="muted">Withdrawing ends the request; it cannot be reopened.</p>
          <button class="button" type="submit">Withdraw request</button>
        </form>`,
        'withdraw',
      )
    : ''
  const decided = request.decidedBy
    ? facts([
        ['Decided by', request.decidedBy],
        ['Decided', time(request.decidedAt)],
        ['Comment', request.decisionComment ?? html`<span class="muted">—</span>`],
        ...(request.exceptionId
          ? [
              [
                'Exception added',
                html`<a href="${href('namespaces', ns, 'firewalls', fw)}#exceptions">${request.exceptionId}</a>`,
              ] as [string, ReturnType<typeof html>],
            ]
          : []),
      ])
    : ''
  const selector = request.proposedException.selector
  // The facts panel is for who decides; a failed upstream degrades inside it, never the page.
  const panel =
    request.canApprove || request.canDeny ? factsPanel(await gatherPackageFacts(req.ctx, fw, id), ns, fw) : ''
  const body = html`${heading(html`Exception for <strong>${selector.packageName}${selector.version ? `@${selector.version}` : ''}</strong>`, html`<span data-testid="request-status">${status(request.status)}</span>`, html`Asked on firewall <a href="${href('namespaces', ns, 'firewalls', fw)}">${fw}</a> · request <span class="small">${request.id}</span>`)}
    <div class="grid two">
      ${card(
        'Request',
        html`${facts([
            ['Asked by', request.requestedBy],
            ['Asked', time(request.requestedAt)],
            ['Why', request.justification],
          ])}
          <h3>What it would allow</h3>
          <div data-testid="proposal">${facts(proposalFields(request.proposedException))}</div>`,
      )}
      ${card(
        'Where it stands',
        html`<p data-testid="request-words">${requestStateInWords(request, req.viewer.principal.id)}</p>
          ${requestSteps(request.status, href('namespaces', ns, 'live', 'exception-requests', fw, id))} ${decided}
          <p class="small muted">
            How requests move from asked to decided:
            <a href="${href('namespaces', ns, 'machines', 'exception-request')}">the request's steps</a>.
          </p>`,
        'decision',
      )}
    </div>
    ${panel} ${approval && !request.canApprove ? errorSummary(approval.errors) : ''}
    <div class="grid two">
      ${approve}
      <div>${deny}${withdraw}</div>
    </div>`
  return layout({
    title: `Exception for ${selector.packageName}`,
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

/**
 * POST `.../approve`. Without exception fields (an API-like post) or with the proposal
 * unchanged, no `exception` is sent and the proposal is approved as it stands; otherwise the
 * edited exception is. The domain checks the permission before it judges the exception.
 */
export async function approveAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const { fw, id } = req.params
  const request = await getExceptionRequest(req.ctx, fw, id)
  const submitted = form.get('id') !== undefined ? exceptionValuesFrom(form) : undefined
  const edited = submitted && !sameException(submitted, request.proposedException) ? exceptionOf(submitted) : undefined
  return orInPlace(
    async () => {
      const comment = ApproveBody.shape.comment.parse(form.text('comment'))
      const result = await approveExceptionRequest(req.ctx, fw, id, {
        ...(edited ? { exception: edited as Exception } : {}),
        ...(comment ? { comment } : {}),
      })
      const also = result.alsoApproved.length ? ` Also approved: ${result.alsoApproved.join(', ')}.` : ''
      const how = edited ? 'with your changes' : 'as proposed'
      return {
        redirect: requestPath(req.viewer.ns, fw, id),
        flash: `Approved ${how}. Exception ${result.exception.id} was added to ${fw}.${also}`,
      }
    },
    exceptionField,
    async (errors) => {
      return exceptionRequestPage(req, { values: submitted ?? exceptionValuesOf(request.proposedException), errors })
    },
  )
}

export async function denyAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const { fw, id } = req.params
  await denyExceptionRequest(req.ctx, fw, id, form.text('comment'))
  return { redirect: requestPath(req.viewer.ns, fw, id), flash: 'Request denied.' }
}

export async function withdrawAction(req: DashboardRequest): Promise<ActionResult> {
  const { fw, id } = req.params
  await withdrawExceptionRequest(req.ctx, fw, id)
  return { redirect: requestPath(req.viewer.ns, fw, id), flash: 'Request withdrawn.' }
}
