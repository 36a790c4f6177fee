import { firewall as firewallAccess } from '../../http/access'
import { invalid, notFound } from '../../common/errors'
import { upsertMember } from '../../firewall/commands'
import { getFirewall, listFirewalls } from '../../firewall/queries'
import { chainOf } from '../../firewall/extends-chain'
import { Exception, type Firewall } from '../../firewall/schema'
import { card, heading } from '../components'
import {
  exceptionField,
  exceptionFields,
  exceptionOf,
  exceptionValuesFrom,
  exceptionValuesOf,
  type ExceptionValues,
} from '../exception-fields'
import { firewallCrumbs, formVersion, fwPath, requireVersion, versionField } from '../firewall-edit'
import { errorSummary, NO_ERRORS, orInPlace, type FormErrors } from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * Add or edit one exception: `.../exceptions/new`, `.../exceptions/{id}/edit`. Saving calls
 * `upsertMember`, the API's `PUT .../exceptions/{exceptionId}` operation.
 */

/** Rule ids an exception may name: the firewall's own and those of the bases it extends. */
async function ruleIdsFor(req: DashboardRequest, fw: Firewall): Promise<string[]> {
  const readable = new Map((await listFirewalls(req.ctx)).map((one) => [one.id, one]))
  const bases = fw.extends.flatMap((id) => chainOf(readable, id))
  return [...new Set([...fw.rules, ...bases.flatMap((base) => base.rules)].map((rule) => rule.id))]
}

async function renderForm(
  req: DashboardRequest,
  fw: Firewall,
  values: ExceptionValues,
  mode: 'new' | 'edit',
  version: number,
  errors: FormErrors,
): Promise<Html> {
  const { ns } = req.viewer
  const form = html`<form method="post" action="${fwPath(ns, fw.id, 'exceptions')}" class="stack" novalidate>
    ${csrfField(req.viewer)}${versionField(version)}<input type="hidden" name="mode" value="${mode}" />
    ${errorSummary(errors)} ${exceptionFields(errors, values, await ruleIdsFor(req, fw), mode === 'new')}
    <div class="actions">
      <button class="button primary" type="submit">Save exception</button>
      <a class="button" href="${fwPath(ns, fw.id)}#exceptions">Cancel</a>
    </div>
  </form>`
  const title = mode === 'new' ? 'Add an exception' : html`Edit exception <code>${values.id}</code>`
  const body = html`${heading(title, '', html`on firewall <strong>${fw.name}</strong>, version ${fw.version}`)}${card('Exception', form, 'exception')}`
  return layout({
    title: mode === 'new' ? 'Add an exception' : `Edit exception ${values.id}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: firewallCrumbs(ns, fw),
    body,
  })
}

export async function newExceptionPage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const values: ExceptionValues = {
    id: '',
    rule: req.query.get('rule') ?? '',
    packageName: '',
    packageVersion: '',
    expires: '',
    reason: '',
    notes: '',
    log: true,
  }
  return renderForm(req, fw, values, 'new', fw.version, NO_ERRORS)
}

export async function editExceptionPage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const exception = fw.exceptions.find((ex) => ex.id === req.params.exceptionId)
  if (!exception) throw notFound('exception', req.params.exceptionId)
  return renderForm(req, fw, exceptionValuesOf(exception), 'edit', fw.version, NO_ERRORS)
}

export async function saveExceptionAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const values = exceptionValuesFrom(form)
  const mode = form.get('mode') === 'edit' ? 'edit' : 'new'
  const version = formVersion(form)
  return orInPlace(
    async () => {
      await firewallAccess('fw:update:exception')(req.ctx, req.params)
      if (mode === 'new' && fw.exceptions.some((ex) => ex.id === values.id)) {
        throw invalid('exception_exists', `exception "${values.id}" already exists`, [
          { path: 'id', message: 'an exception with this id already exists; edit it instead' },
        ])
      }
      const exception = Exception.parse(exceptionOf(values))
      const { firewall } = await upsertMember(req.ctx, fw.id, 'exceptions', exception, requireVersion(version))
      return {
        redirect: `${fwPath(req.viewer.ns, fw.id)}#exceptions`,
        flash: `Exception ${exception.id} saved: the firewall is now at version ${firewall.version}.`,
      }
    },
    exceptionField,
    async (errors, stale) => {
      const current = await getFirewall(req.ctx, fw.id)
      return renderForm(req, current, values, mode, stale ? current.version : (version ?? current.version), errors)
    },
  )
}
