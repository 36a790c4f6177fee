import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, toNodeListener } from 'h3'
import { createServices, type Services } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { issueToken } from '../../server/namespace/tokens'
import { createAdvisorySource, type AdvisorySource } from '../../server/advisories/directory-source'
import { fixedAdvisories, type AdvisoryLookup } from '../../server/advisories/lookup'
import { createRegistryHandler, type RegistryHandlerOptions } from '../../server/registry/handler'
import { FirewallInput, type Firewall } from '../../server/firewall/schema'
import type { Backend } from '../../storage'
import { keys } from '../../storage/repositories/keys'
import { FirewallLogRepository } from '../../storage/repositories/firewall-log'
import { firewallLogPage } from '../../server/firewall/log-page'
import type { FirewallLogEntry, FirewallLogFilter } from '../../server/firewall/log-query'
import type { NamespaceEvent } from '../../server/events/schemas'
import { makeBackend, type BackendKind } from '../support/backends'

/** A clock the test moves forward (exception expiry) without waiting. */
export interface TestClock {
  now(): number
  advance(ms: number): void
}

export function testClock(): TestClock {
  let offset = 0
  return { now: () => Date.now() + offset, advance: (ms) => (offset += ms) }
}

/** The firewall proxy served by a real HTTP server on loopback, backed by a real backend. */
export interface ProxyHarness {
  services: Services
  backend: Backend
  clock: TestClock
  origin: string
  ns: string
  /** `{origin}/registry/{ns}/{fw}/` */
  registryUrl(fw: string): string
  /** Token material of a new personal token of `user` (the owner holds ns:admin). */
  token(user: string): Promise<string>
  putFirewall(id: string, config: Record<string, unknown>): Promise<Firewall>
  events(type?: string): Promise<NamespaceEvent<Record<string, any>>[]>
  log(fw: string, filter?: FirewallLogFilter): Promise<FirewallLogEntry[]>
  close(): Promise<void>
}

export async function startProxy(
  options: {
    backend?: BackendKind
    advisoryDir?: string
    /** The advisory data of every request; default: `advisoryDir`'s (none without it). */
    advisories?: () => AdvisoryLookup
    handler?: RegistryHandlerOptions
  } = {},
): Promise<ProxyHarness> {
  const backend = await makeBackend(options.backend ?? 'fs')
  const clock = testClock()
  // The test upstreams (Verdaccio, PyPI, Maven, NuGet stand-ins) listen on loopback, which the
  // upstream address policy refuses unless exempted.
  const env = { UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' }
  const source: AdvisorySource = createAdvisorySource(options.advisoryDir)
  await source.ready
  const services = createServices(backend, {
    clock,
    config: { ...configFromEnv(env), publicBaseUrl: null },
    advisories: fixedAdvisories(options.advisories ?? (() => source.current())),
  })
  const ns = 'acme'
  await services.namespaces.create({ id: ns, owner: 'owner', createdAt: new Date().toISOString() })
  const app = createApp()
  app.use(createRegistryHandler(async () => services, options.handler))
  const server: Server = createServer(toNodeListener(app))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const logs = new FirewallLogRepository<FirewallLogEntry>(backend)
  return {
    services,
    backend,
    clock,
    origin,
    ns,
    registryUrl: (fw) => `${origin}/registry/${ns}/${fw}/`,
    token: async (user) =>
      (await issueToken(services, { ns, kind: 'personal', name: 'npm', principalId: user, createdBy: 'owner' }))
        .material,
    putFirewall: (id, config) => {
      const input = FirewallInput.parse({ ...config, id })
      const next: Firewall = { ...input, id, name: input.name ?? id, version: 0, updatedAt: '' }
      return services.firewalls.mutate(ns, id, { userId: 'owner' }, new Date(clock.now()).toISOString(), () => ({
        next,
        summary: 'test setup',
        result: (stored) => stored!,
      }))
    },
    events: async (type) => {
      const all = await backend.logs.range<NamespaceEvent<Record<string, any>>>(keys.eventLog(ns), { limit: 100_000 })
      return all.map((e) => e.value).filter((e) => e.namespace === ns && (!type || e.type === type))
    },
    log: async (fw, filter = {}) => (await firewallLogPage(logs, ns, fw, filter, 1000)).entries,
    close: async () => {
      source.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await backend.close()
    },
  }
}
