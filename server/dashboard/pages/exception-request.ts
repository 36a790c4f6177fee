import { exceptionRequestMachine } from '../../../machines/exception-request.machine'
import { invalid } from '../../common/errors'
import { ApproveBody, approveExceptionRequest, denyExceptionRequest, getExceptionRequest, withdrawExceptionRequest } from '../../exception-requests'
import { card, facts, heading, json, status } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { csrfField, layout } from '../layout'
import { liveDiagram } from '../live-diagram'
import type { Form } from '../request'

/**
 * `/namespaces/{ns}/firewalls/{fw}/exception-requests/{id}` (the `dashboardUrl` of events): the
 * request, its machine with the live state, and the decisions the viewer may take now. The
 * forms appear only when the request's own `canApprove`/`canDeny`/`canWithdraw` say so; the
 * actions call the same domain functions as the API, so a forged post is refused the same way.
 */

const requestPath = (ns: string, fw: string, id: string, ...rest: string[]) => href('namespaces', ns, 'firewalls', fw, 'exception-requests', id, ...rest)

export async function exceptionRequestPage(req: DashboardRequest) {
  const { ns } = req.viewer
  const { fw, id } = req.params
  const request = await getExceptionRequest(req.ctx, fw, id)
  const base = requestPath(ns, fw, id)
  const approve = request.canApprove
    ? card('Approve', html`<form method="post" action="${base}/approve" class="stack">
        ${csrfField(req.viewer)}
        <label>Exception to add (JSON; edit it to narrow the package, version or expiry)
          <textarea name="exception" rows="12" class="mono" spellcheck="false" required>${JSON.stringify(request.proposedException, null, 2)}</textarea></label>
        <label>Comment for the requester <textarea name="comment" rows="2"></textarea></label>
        <div class="actions"><button class="button primary" type="submit">Approve and add exception</button></div>
      </form>`, 'approve')
    : ''
  const deny = request.canDeny
    ? card('Deny', html`<form method="post" action="${base}/deny" class="stack">
        ${csrfField(req.viewer)}
        <label>Why is it denied? <textarea name="comment" rows="3"></textarea></label>
        <div class="actions"><button class="button danger" type="submit">Deny request</button></div>
      </form>`, 'deny')
    : ''
  const withdraw = request.canWithdraw
    ? card('Withdraw', html`<form method="post" action="${base}/withdraw" class="inline" data-confirm="Withdraw this request?">
        ${csrfField(req.viewer)}<p class="muted">Withdrawing ends the request; it cannot be reopened.</p>
        <button class="button" type="submit">Withdraw request</button></form>`, 'withdraw')
    : ''
  const decided = request.decidedBy
    ? facts([['Decided by', request.decidedBy], ['Decided', time(request.decidedAt)], ['Comment', request.decisionComment ?? html`<span class="muted">—</span>`], ...(request.exceptionId ? [['Exception added', html`<a href="${href('namespaces', ns, 'firewalls', fw)}#exceptions"><code>${request.exceptionId}</code></a>`] as [string, ReturnType<typeof html>]] : [])])
    : html`<p class="muted">Not decided yet.</p>`
  const live = href('namespaces', ns, 'live', 'exception-requests', fw, id)
  const body = html`${heading(html`Request <code>${request.id}</code>`, html`<span data-testid="request-status">${status(request.status)}</span>`, html`for <strong>${request.proposedException.selector.packageName}${request.proposedException.selector.version ? `@${request.proposedException.selector.version}` : ''}</strong> on firewall <a href="${href('namespaces', ns, 'firewalls', fw)}">${fw}</a>`)}
    <div class="grid two">
      ${card('Request', html`${facts([['Requested by', request.requestedBy], ['Requested', time(request.requestedAt)], ['Rule', html`<code>${request.proposedException.rule}</code>`], ['Justification', request.justification]])}
        <h3>Proposed exception</h3>${json(request.proposedException, 'Proposed exception')}`)}
      <div>${card('Decision', decided)}
      ${card('State machine', await liveDiagram(exceptionRequestMachine, request.status, live, 'Exception request machine'), 'machine')}</div>
    </div>
    <div class="grid two">${approve}<div>${deny}${withdraw}</div></div>`
  return layout({ title: `Request ${request.id}`, section: 'requests', viewer: req.viewer, flash: req.flash, crumbs: [['Exception requests', href('namespaces', ns, 'exception-requests')], [fw, href('namespaces', ns, 'firewalls', fw, 'exception-requests')]], body })
}

function parseException(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '')
  } catch {
    throw invalid('invalid_json', 'the exception is not valid JSON', [{ path: 'exception', message: 'not valid JSON' }])
  }
}

export async function approveAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const { fw, id } = req.params
  const body = ApproveBody.parse({ exception: parseException(form.get('exception')), ...(form.text('comment') ? { comment: form.text('comment') } : {}) })
  const result = await approveExceptionRequest(req.ctx, fw, id, body)
  const also = result.alsoApproved.length ? ` Also approved: ${result.alsoApproved.join(', ')}.` : ''
  return { redirect: requestPath(req.viewer.ns, fw, id), flash: `Approved. Exception ${result.exception.id} was added to ${fw}.${also}` }
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
