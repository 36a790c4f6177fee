import { ManualClock } from '../support/manual-clock'
import type { CallContext } from '../../server/auth/call-context'
import { configFromEnv } from '../../server/app/config'
import { createServices, type Services } from '../../server/app/services'
import type { Principal } from '../../server/auth/principal'
import type { NamespaceEvent } from '../../server/events/schemas'
import { putFirewall } from '../../server/firewall/commands'
import { createExceptionRequest, listExceptionRequests } from '../../server/exception-requests'
import type { FirewallInput, FirewallPermission } from '../../server/firewall/schema'
import type { Backend } from '../../storage'
import { keys } from '../../storage/repositories/keys'
import { makeBackend, type BackendKind } from '../support/backends'

export const NS = 'acme'
export const FW = 'npm-main'
export const DASHBOARD = 'https://dash.example'

/** Who plays which part: requester (fw:access), reviewer (fw:update:exception), third user (fw:read). */
export const PERMISSIONS: Record<string, FirewallPermission[]> = {
  alice: ['fw:access'],
  dave: ['fw:access'],
  rita: ['fw:read', 'fw:update:exception'],
  carl: ['fw:read', 'fw:access'],
}

export function principal(id: string, owner = false): Principal {
  return {
    type: 'user',
    id,
    namespace: NS,
    tokenId: `tok-${id}`,
    tokenIdentifier: `tid-${id}`,
    teams: [],
    grants: [],
    owner,
  }
}

export interface Harness {
  backend: Backend
  services: Services
  clock: ManualClock
  as(user: string): CallContext<Services>
  events(): Promise<NamespaceEvent[]>
  close(): Promise<void>
}

/** Real storage of the given kind, services over it and a firewall with one rule. */
export async function harness(kind: BackendKind, firewall: Partial<FirewallInput> = {}): Promise<Harness> {
  const backend = await makeBackend(kind)
  // Moved by hand, so times in requests and events are exact.
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00.000Z'))
  const services = createServices(backend, { clock, config: configFromEnv({ DASHBOARD_URL: DASHBOARD + '/' }) })
  let request = 0
  const as = (user: string): CallContext<Services> => ({
    services,
    ns: NS,
    principal: principal(user, user === 'owner'),
    meta: { requestId: `req-${++request}` },
  })
  await putFirewall(as('owner'), FW, {
    ecosystem: 'npm',
    description: '',
    upstreams: [],
    rules: [
      {
        id: 'no-malware',
        executionPhase: 'download',
        selector: { function: { name: 'malware' } },
        ruleEffect: { block: true, log: true },
        description: 'malware',
      },
    ],
    exceptions: [],
    permissions: { ...PERMISSIONS },
    extends: [],
    ...firewall,
  })
  return {
    backend,
    services,
    clock,
    as,
    async events() {
      const page = await backend.logs.range<NamespaceEvent>(keys.eventLog(NS), { limit: 10_000 })
      return page.map((entry) => entry.value)
    },
    close: () => backend.close(),
  }
}

/** A proposal for `packageName@version` under the firewall's rule. */
export const proposal = (id: string, packageName = 'left-pad', version: string | undefined = '1.3.0') => ({
  id,
  rule: 'no-malware',
  selector: { packageName, ...(version !== undefined ? { version } : {}) },
  log: true,
  reason: 'false_positive' as const,
})

/** The firewall's requests as `user` lists them. */
export const list = (
  h: Harness,
  user: string,
  query: { status?: ('pending' | 'approved' | 'denied' | 'withdrawn')[]; limit?: number; cursor?: string } = {},
) => listExceptionRequests(h.as(user), FW, { limit: 100, ...query })

/** `user` asks for an exception for `pkg@version`. */
export const request = (h: Harness, user = 'alice', id = 'ex-left-pad', pkg?: string, version?: string) =>
  createExceptionRequest(h.as(user), FW, {
    proposedException: proposal(id, pkg, version),
    justification: 'needed for the build',
  })
