import { firewall as firewallAccess } from '../../http/access'
import { invalid, notFound } from '../../common/errors'
import { deleteMember, upsertMember } from '../../firewall/commands'
import { getFirewall } from '../../firewall/queries'
import { EXECUTION_PHASES, Rule, type Firewall } from '../../firewall/schema'
import { listLicenseSets } from '../../namespace/license-sets'
import { card, heading, postButton } from '../components'
import { expectedVersion, firewallCrumbs, formVersion, fwPath, versionField } from '../firewall-edit'
import {
  checkField,
  errorSummary,
  inputField,
  NO_ERRORS,
  orInPlace,
  selectField,
  textareaField,
  type FormErrors,
} from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import { readForm, type Form } from '../request'
import { selectorBuilder } from '../selector-builder'
import {
  applyIntent,
  draftOf,
  emptyDraft,
  readDraft,
  selectorField,
  selectorOf,
  type SelectorDraft,
} from '../selector-draft'

/**
 * Add or edit one rule: `.../rules/new`, `.../rules/{id}/edit`. Saving calls `upsertMember`, the
 * API's `PUT .../rules/{ruleId}` operation, with the version the form was drawn from.
 */

interface RuleValues {
  mode: 'new' | 'edit'
  id: string
  executionPhase: string
  description: string
  block: boolean
  log: boolean
  selector: SelectorDraft
  version: number
}

const valuesOf = (rule: Rule, version: number): RuleValues => ({
  mode: 'edit',
  id: rule.id,
  executionPhase: rule.executionPhase,
  description: rule.description,
  block: rule.ruleEffect.block,
  log: rule.ruleEffect.log,
  selector: draftOf(rule.selector),
  version,
})

function valuesFrom(form: Form, fw: Firewall): RuleValues {
  return {
    mode: form.get('mode') === 'edit' ? 'edit' : 'new',
    id: form.text('id') ?? '',
    executionPhase: form.get('executionPhase') ?? 'download',
    description: form.get('description') ?? '',
    block: form.get('block') === 'true',
    log: form.get('log') === 'true',
    selector: readDraft(form),
    version: formVersion(form) ?? fw.version,
  }
}

/** Error paths of a rule body (`selector...`, `description`) or of the firewall (`rules[2]...`) to fields. */
function fieldOf(path: string): string | undefined {
  const selector = selectorField(path)
  if (selector) return selector
  const field = /^(?:rules\[\d+\]\.)?(id|executionPhase|description|ruleEffect)/.exec(path)?.[1]
  return field === 'ruleEffect' ? 'block' : field
}

async function renderForm(req: DashboardRequest, fw: Firewall, values: RuleValues, errors: FormErrors): Promise<Html> {
  const { ns } = req.viewer
  const licenseSets = (await listLicenseSets(req.ctx)).map((set) => ({ id: set.id, name: set.name }))
  const title = values.mode === 'new' ? 'Add a rule' : html`Edit rule <code>${values.id}</code>`
  const idField =
    values.mode === 'new'
      ? inputField(errors, {
          label: 'Rule id',
          name: 'id',
          value: values.id,
          required: true,
          placeholder: 'no-install-scripts',
          hint: 'Letters, digits, dot, dash and underscore; exceptions name the rule by it.',
        })
      : html`<input type="hidden" name="id" value="${values.id}" />`
  const form = html`<form method="post" action="${fwPath(ns, fw.id, 'rules')}" class="stack" novalidate>
    ${csrfField(req.viewer)}${versionField(values.version)}<input type="hidden" name="mode" value="${values.mode}" />
    <button type="submit" class="visually-hidden" tabindex="-1" aria-hidden="true">Save</button>
    ${errorSummary(errors)}
    <div class="grid form-grid">
      ${idField}
      ${selectField(errors, { label: 'Phase', name: 'executionPhase', value: values.executionPhase, choices: EXECUTION_PHASES.map((p) => [p, p === 'versions' ? 'versions (hide versions from metadata)' : p === 'upload' ? 'upload (publish)' : 'download']) })}
      ${textareaField(errors, { label: 'Description', name: 'description', value: values.description, rows: 2, hint: 'Shown to the developer in the block message.' })}
      <fieldset class="form-section">
        <legend>Effect</legend>
        ${checkField(errors, { label: 'Block what matches', name: 'block', checked: values.block })}
        ${checkField(errors, { label: 'Log what matches', name: 'log', checked: values.log })}
      </fieldset>
    </div>
    ${selectorBuilder(values.selector, errors, { licenseSets, draftAction: fwPath(ns, fw.id, 'rules', 'draft') })}
    <div class="actions">
      <button class="button primary" type="submit">Save rule</button>
      <a class="button" href="${fwPath(ns, fw.id)}#rules">Cancel</a>
    </div>
  </form>`
  const remove =
    values.mode === 'edit' && fw.rules.some((rule) => rule.id === values.id)
      ? card(
          'Delete',
          html`<p class="small muted">Exceptions naming this rule stay but no longer apply to anything.</p>
            ${postButton(req.viewer, fwPath(ns, fw.id, 'rules', values.id, 'delete'), 'Delete rule', { kind: 'danger', confirm: `Delete rule ${values.id}?`, fields: { version: String(fw.version) } })}`,
          'delete',
        )
      : ''
  const body = html`${heading(title, '', html`on firewall <strong>${fw.name}</strong> (<span class="badge">${fw.ecosystem}</span>), version ${fw.version}`)}
  ${card('Rule', form, 'rule')}${remove}`
  return layout({
    title: values.mode === 'new' ? 'Add a rule' : `Edit rule ${values.id}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: firewallCrumbs(ns, fw),
    body,
  })
}

export async function newRulePage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const values: RuleValues = {
    mode: 'new',
    id: '',
    executionPhase: 'download',
    description: '',
    block: true,
    log: true,
    selector: emptyDraft('packageName'),
    version: fw.version,
  }
  return renderForm(req, fw, values, NO_ERRORS)
}

export async function editRulePage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const rule = fw.rules.find((r) => r.id === req.params.ruleId)
  if (!rule) throw notFound('rule', req.params.ruleId)
  return renderForm(req, fw, valuesOf(rule, fw.version), NO_ERRORS)
}

/** POST `.../rules/draft`: "Add condition" / "Remove" draw the form again with the draft changed; nothing is saved. */
export async function ruleDraftPage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const form = await readForm(req.event)
  const values = valuesFrom(form, fw)
  return renderForm(req, fw, { ...values, selector: applyIntent(values.selector, form.get('intent') ?? '') }, NO_ERRORS)
}

export async function saveRuleAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const values = valuesFrom(form, fw)
  return orInPlace(
    async () => {
      // Authorize before judging the body, as the API does.
      await firewallAccess('fw:update:rule')(req.ctx, req.params)
      if (values.mode === 'new' && fw.rules.some((rule) => rule.id === values.id)) {
        throw invalid('rule_exists', `rule "${values.id}" already exists`, [
          { path: 'id', message: 'a rule with this id already exists; edit it instead' },
        ])
      }
      const rule = Rule.parse({
        id: values.id,
        executionPhase: values.executionPhase,
        description: values.description,
        ruleEffect: { block: values.block, log: values.log },
        selector: selectorOf(values.selector),
      })
      const { firewall } = await upsertMember(req.ctx, fw.id, 'rules', rule, expectedVersion(form))
      return {
        redirect: `${fwPath(req.viewer.ns, fw.id)}#rules`,
        flash: `Rule ${rule.id} saved: the firewall is now at version ${firewall.version}.`,
      }
    },
    fieldOf,
    async (errors, stale) => {
      const current = await getFirewall(req.ctx, fw.id)
      return renderForm(req, current, stale ? { ...values, version: current.version } : values, errors)
    },
  )
}

export async function deleteRuleAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  await firewallAccess('fw:update:rule')(req.ctx, req.params)
  const firewall = await deleteMember(req.ctx, req.params.fw, 'rules', req.params.ruleId, expectedVersion(form))
  return {
    redirect: `${fwPath(req.viewer.ns, req.params.fw)}#rules`,
    flash: `Rule ${req.params.ruleId} deleted: the firewall is now at version ${firewall.version}.`,
  }
}
