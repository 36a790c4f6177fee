import { INSTALL_FIXTURES } from '../../test/fixtures/npm-packages'
import { publishFixtures } from '../../test/registry/npm-cli'
import { apiClient } from '../../test/support/server'
import { startVerdaccio, type Verdaccio } from '../../test/support/verdaccio'
import type { SoakReceiver } from './receiver'

export const NS = 'default'
/** Two npm firewalls on the Verdaccio upstream; `soak-b` exists to test the webhook firewall scope. */
export const FIREWALLS = ['soak', 'soak-b'] as const

/** The packages the producer installs and the event each install must produce. */
export const INSTALLS = [
  { spec: 'fw-ok', expect: 'installed' },
  { spec: '@fwscope/scoped', expect: 'installed' }, // log-only rule: firewall.allowed
  { spec: 'fw-blocked-name', expect: 'blocked' }, // block rule: firewall.blocked
] as const

/** A webhook of the soak: its receiver path name, subscription and what the API answered. */
export interface SoakWebhook {
  name: string
  eventTypes: string[]
  firewalls: string[]
  id: string
  createdAt: string
}

const HOOKS: { name: string; eventTypes: string[]; firewalls?: string[] }[] = [
  { name: 'all', eventTypes: ['firewall.*', 'config.*', 'audit.*'] },
  { name: 'firewall', eventTypes: ['firewall.*'], firewalls: ['soak'] },
  { name: 'config', eventTypes: ['config.firewall.updated', 'audit.team.*'] },
  { name: 'audit', eventTypes: ['audit.*'] },
]

const FIXTURE_NAMES = new Set(['fw-dep', 'fw-ok', '@fwscope/scoped', 'fw-blocked-name'])

/** Verdaccio with the few fixture packages the installs need. */
export async function startUpstream(): Promise<Verdaccio> {
  const registry = await startVerdaccio()
  await publishFixtures(
    registry.url,
    registry.token,
    INSTALL_FIXTURES.filter((pkg) => FIXTURE_NAMES.has(pkg.name)),
  )
  return registry
}

export function firewallBody(registry: Verdaccio) {
  return {
    ecosystem: 'npm',
    upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }],
    rules: [
      {
        id: 'block-name',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['fw-blocked-name'] } },
        description: 'fw-blocked-name is banned',
      },
      {
        id: 'log-scoped',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['@fwscope/*'] } },
        ruleEffect: { block: false, log: true },
        description: 'log every @fwscope package',
      },
    ],
  }
}

async function must(what: string, call: Promise<{ status: number; body: any }>, ok: number[]): Promise<any> {
  const response = await call
  if (!ok.includes(response.status)) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`)
  return response.body
}

/** Firewalls and webhooks through the API of one process; registers each webhook's secret with the receiver. */
export async function configure(
  baseUrl: string,
  token: string,
  registry: Verdaccio,
  receiver: SoakReceiver,
): Promise<SoakWebhook[]> {
  const api = apiClient(baseUrl, token)
  for (const fw of FIREWALLS)
    await must(`PUT firewall ${fw}`, api('PUT', `/v1/${NS}/config/${fw}`, firewallBody(registry)), [200, 201])
  const webhooks: SoakWebhook[] = []
  for (const hook of HOOKS) {
    const body = await must(
      `POST webhook ${hook.name}`,
      api('POST', `/v1/${NS}/webhooks`, {
        name: `soak-${hook.name}`,
        url: receiver.url(hook.name),
        eventTypes: hook.eventTypes,
        firewalls: hook.firewalls ?? [],
      }),
      [201],
    )
    receiver.addSecret(hook.name, body.secret)
    webhooks.push({
      name: hook.name,
      eventTypes: hook.eventTypes,
      firewalls: hook.firewalls ?? [],
      id: body.id,
      createdAt: body.createdAt,
    })
  }
  return webhooks
}
