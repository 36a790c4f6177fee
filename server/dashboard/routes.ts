import { createRouter, defineEventHandler, type H3Event } from 'h3'
import { DomainError } from '../common/errors'
import { setRequestRoute } from '../app/request-context'
import { action, download, errorPage, page, type DashboardHandler } from './handler'
import type { DashboardServices } from './ports'
import { approveAction, denyAction, exceptionRequestPage, withdrawAction } from './pages/exception-request'
import { createExceptionRequestAction, newExceptionRequestPage } from './pages/exception-request-new'
import { firewallQueuePage, namespaceQueuePage } from './pages/exception-requests'
import { firewallPage, removeException } from './pages/firewall'
import { createFirewallAction, newFirewallPage } from './pages/firewall-new'
import { cloneAction, deleteFirewallAction, saveSettingsAction, settingsPage } from './pages/firewall-settings'
import { deleteRuleAction, editRulePage, newRulePage, ruleDraftPage, saveRuleAction } from './pages/rule-edit'
import { editExceptionPage, newExceptionPage, saveExceptionAction } from './pages/exception-edit'
import { deleteUpstreamAction, editUpstreamPage, newUpstreamPage, saveUpstreamAction } from './pages/upstream-edit'
import { permissionsPage, savePermissionsAction } from './pages/permissions-edit'
import { firewallLogPage } from './pages/firewall-log'
import { firewallsPage } from './pages/firewalls'
import { developerHomePage } from './pages/developer-home'
import { readsAnyFirewall } from '../firewall/queries'
import { hasNamespacePermission } from '../auth/permissions'
import { historyPage, rollbackAction, rollbackConfirmPage } from './pages/history'
import {
  createLicenseSetAction,
  deleteLicenseSetAction,
  licenseSetsPage,
  updateLicenseSetAction,
} from './pages/license-sets'
import { exceptionRequestLive, webhookLive } from './pages/live'
import { machinePage, machinesPage } from './pages/machines'
import { addMemberAction, createTeamAction, deleteTeamAction, removeMemberAction, teamsPage } from './pages/teams'
import { createPersonalAction, createServiceAction, revokeAction, tokensPage } from './pages/tokens'
import { revokeUserTokenAction, usersPage } from './pages/users'
import { recoverAction, releaseAction, revealAction, rotateAction, testAction, webhookPage } from './pages/webhook'
import { createWebhookAction, webhooksPage } from './pages/webhooks'
import { deleteWebhookAction, editWebhookPage, saveWebhookAction, setEnabledAction } from './pages/webhook-edit'
import { overviewPage } from './pages/overview'
import { inventoryPage, sbomDownload } from './pages/inventory'
import { acknowledgeAction, exposuresPage } from './pages/exposures'
import { eventCatalogPage } from './pages/event-catalog'
import { deliveryPage, resendAction } from './pages/webhook-delivery'

/**
 * The dashboard's route table under `/namespaces/{ns}/...`: GET pages and POST form actions.
 * Each action names its audit action (the API's names where one exists).
 */

const NS = '/namespaces/:ns'
const FW = `${NS}/firewalls/:fw`
const REQ = `${FW}/exception-requests/:id`
const WH = `${NS}/webhooks/:id`
const audit = (name: string, resourceType: string, key: string) => ({
  action: name,
  resourceType,
  resourceId: (p: Record<string, string>) => p[key],
})

const pages: [string, DashboardHandler][] = [
  // The namespace home by what the viewer may do: who reads a firewall (or may create one) gets
  // the owners' overview, who only installs through them gets their own home.
  [
    NS,
    page(async (req) =>
      hasNamespacePermission(req.viewer.principal, 'ns:firewalls:create') || (await readsAnyFirewall(req.ctx))
        ? overviewPage(req)
        : developerHomePage(req),
    ),
  ],
  [`${NS}/mine`, page(developerHomePage)],
  [`${NS}/firewalls`, page(firewallsPage)],
  [`${NS}/firewalls/new`, page(newFirewallPage)],
  [FW, page(firewallPage)],
  [`${FW}/settings`, page(settingsPage)],
  [`${FW}/permissions`, page(permissionsPage)],
  [`${FW}/rules/new`, page(newRulePage)],
  [`${FW}/rules/:ruleId/edit`, page(editRulePage)],
  [`${FW}/exceptions/new`, page(newExceptionPage)],
  [`${FW}/exceptions/:exceptionId/edit`, page(editExceptionPage)],
  [`${FW}/upstreams/new`, page(newUpstreamPage)],
  [`${FW}/upstreams/:upstreamId/edit`, page(editUpstreamPage)],
  [`${FW}/history`, page(historyPage)],
  [`${FW}/versions/:version/rollback`, page(rollbackConfirmPage)],
  [`${FW}/log`, page(firewallLogPage)],
  [`${FW}/inventory`, page(inventoryPage)],
  [`${FW}/inventory/sbom`, download(sbomDownload)],
  [`${FW}/exception-requests`, page(firewallQueuePage)],
  [`${FW}/exception-requests/new`, page(newExceptionRequestPage)],
  [REQ, page(exceptionRequestPage)],
  [`${NS}/exception-requests`, page(namespaceQueuePage)],
  [`${NS}/exposures`, page(exposuresPage)],
  [`${NS}/webhooks`, page(webhooksPage)],
  [WH, page((req) => webhookPage(req))],
  [`${WH}/edit`, page(editWebhookPage)],
  [`${NS}/event-types`, page(eventCatalogPage)],
  [`${WH}/deliveries/:deliveryId`, page(deliveryPage)],
  [`${NS}/teams`, page(teamsPage)],
  [`${NS}/tokens`, page((req) => tokensPage(req))],
  [`${NS}/users`, page(usersPage)],
  [`${NS}/license-sets`, page(licenseSetsPage)],
  [`${NS}/machines`, page(machinesPage)],
  [`${NS}/machines/:machine`, page(machinePage)],
  [`${NS}/live/webhooks/:id`, webhookLive],
  [`${NS}/live/exception-requests/:fw/:id`, exceptionRequestLive],
]

const actions: [string, DashboardHandler][] = [
  [`${NS}/firewalls`, action(audit('firewall.put', 'firewall', 'fw'), createFirewallAction)],
  [`${FW}/settings`, action(audit('firewall.put', 'firewall', 'fw'), saveSettingsAction)],
  [`${FW}/permissions`, action(audit('firewall.put', 'firewall', 'fw'), savePermissionsAction)],
  [`${FW}/clone`, action(audit('firewall.clone', 'firewall', 'fw'), cloneAction)],
  [`${FW}/delete`, action(audit('firewall.delete', 'firewall', 'fw'), deleteFirewallAction)],
  [`${FW}/rules`, action(audit('firewall.rule.upsert', 'firewall', 'fw'), saveRuleAction)],
  [`${FW}/rules/draft`, page(ruleDraftPage)],
  [`${FW}/rules/:ruleId/delete`, action(audit('firewall.rule.delete', 'firewall', 'fw'), deleteRuleAction)],
  [`${FW}/exceptions`, action(audit('firewall.exception.upsert', 'firewall', 'fw'), saveExceptionAction)],
  [`${FW}/upstreams`, action(audit('firewall.put', 'firewall', 'fw'), saveUpstreamAction)],
  [`${FW}/upstreams/:upstreamId/delete`, action(audit('firewall.put', 'firewall', 'fw'), deleteUpstreamAction)],
  [`${FW}/versions/:version/rollback`, action(audit('firewall.rollback', 'firewall', 'fw'), rollbackAction)],
  [
    `${FW}/exceptions/:exceptionId/delete`,
    action(audit('firewall.exception.delete', 'firewall', 'fw'), removeException),
  ],
  [
    `${FW}/exception-requests/new`,
    action(audit('exception-request.create', 'firewall', 'fw'), createExceptionRequestAction),
  ],
  [`${NS}/exposures/:id/acknowledge`, action(audit('exposure.acknowledge', 'exposure', 'id'), acknowledgeAction)],
  [`${REQ}/approve`, action(audit('exception-request.approve', 'exception-request', 'id'), approveAction)],
  [`${REQ}/deny`, action(audit('exception-request.deny', 'exception-request', 'id'), denyAction)],
  [`${REQ}/withdraw`, action(audit('exception-request.withdraw', 'exception-request', 'id'), withdrawAction)],
  [`${NS}/webhooks`, action(audit('webhook.create', 'webhook', 'id'), createWebhookAction)],
  [WH, action(audit('webhook.update', 'webhook', 'id'), saveWebhookAction)],
  [`${WH}/enabled`, action(audit('webhook.update', 'webhook', 'id'), setEnabledAction)],
  [`${WH}/delete`, action(audit('webhook.delete', 'webhook', 'id'), deleteWebhookAction)],
  [`${WH}/secret/reveal`, action(audit('webhook.secret.reveal', 'webhook', 'id'), revealAction)],
  [`${WH}/secret/rotate`, action(audit('webhook.secret.rotate', 'webhook', 'id'), rotateAction)],
  [`${WH}/release`, action(audit('webhook.release', 'webhook', 'id'), releaseAction)],
  [`${WH}/test`, action(audit('webhook.test', 'webhook', 'id'), testAction)],
  [`${WH}/recover`, action(audit('webhook.recover', 'webhook', 'id'), recoverAction)],
  [`${WH}/deliveries/:deliveryId/resend`, action(audit('webhook.delivery.resend', 'webhook', 'id'), resendAction)],
  [`${NS}/teams`, action(audit('team.create', 'team', 'team'), createTeamAction)],
  [`${NS}/teams/:team/delete`, action(audit('team.delete', 'team', 'team'), deleteTeamAction)],
  [`${NS}/teams/:team/members`, action(audit('team.member.add', 'team', 'team'), addMemberAction)],
  [`${NS}/teams/:team/members/:userId/remove`, action(audit('team.member.remove', 'team', 'team'), removeMemberAction)],
  [`${NS}/tokens/personal`, action(audit('token.personal.create', 'token', 'token'), createPersonalAction)],
  [`${NS}/tokens/service`, action(audit('token.service.create', 'token', 'token'), createServiceAction)],
  [`${NS}/tokens/:token/revoke`, action(audit('token.revoke', 'token', 'token'), revokeAction)],
  [`${NS}/users/:userId/tokens/:token/revoke`, action(audit('token.revoke', 'token', 'token'), revokeUserTokenAction)],
  [`${NS}/license-sets`, action(audit('license-set.create', 'license-set', 'set'), createLicenseSetAction)],
  [`${NS}/license-sets/:set`, action(audit('license-set.update', 'license-set', 'set'), updateLicenseSetAction)],
  [`${NS}/license-sets/:set/delete`, action(audit('license-set.delete', 'license-set', 'set'), deleteLicenseSetAction)],
]

/** Names the route template (`/namespaces/{ns}/firewalls/{fw}`) in the request's log lines and metrics. */
function named(path: string, handler: DashboardHandler, services: DashboardServices) {
  const template = path.replace(/:(\w+)/g, '{$1}')
  return defineEventHandler((event) => {
    setRequestRoute(template)
    return handler(event, services)
  })
}

/**
 * The handler of `/namespaces/...` requests over the ports `services` resolves to (the route
 * file hands it the composition root's); unknown paths get the dashboard's 404 page.
 * @example export default defineEventHandler(createDashboardHandler(useServices))
 */
export function createDashboardHandler(services: DashboardServices) {
  const router = createRouter({ preemptive: true })
  for (const [path, handler] of pages) router.get(path, named(path, handler, services))
  for (const [path, handler] of actions) router.post(path, named(path, handler, services))
  return async (event: H3Event) => {
    try {
      return await router.handler(event)
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode === 405 ? 'method' : 'path'
      return errorPage(
        event,
        new DomainError(
          'not_found',
          'page_not_found',
          status === 'method'
            ? `${event.method} is not allowed here`
            : `no dashboard page at ${event.path.split('?')[0]}`,
        ),
        (await services()).config.trustProxy,
      )
    }
  }
}
