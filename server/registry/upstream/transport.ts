import type { Agent } from 'undici'
import { upstreamAddressPolicy, type AddressPolicy, type UpstreamAddressSettings } from '../../net/address-policy'
import { createGuardedAgent } from '../../net/guarded-agent'

/**
 * The one pooled connection agent of this process for upstream registries, bound to the
 * upstream address policy. Configured by the composition root from
 * AppConfig; until then the defaults apply (no network exempted).
 */
let policy: AddressPolicy = upstreamAddressPolicy({ allowedNetworks: [], deniedNetworks: [] })
let agent: Agent | null = null

/** Sets the policy; an agent built for another policy is closed and rebuilt on next use. */
export function configureUpstreamTransport(settings: UpstreamAddressSettings): void {
  const next = upstreamAddressPolicy(settings)
  if (JSON.stringify(next) === JSON.stringify(policy)) return
  policy = next
  const previous = agent
  agent = null
  void previous?.close().catch(() => undefined)
}

/** The agent (built lazily, so processes that never call an upstream open nothing). */
export function upstreamAgent(): Agent {
  agent ??= createGuardedAgent(policy)
  return agent
}

/** Closes the pooled connections (shutdown). */
export async function closeUpstreamTransport(): Promise<void> {
  const current = agent
  agent = null
  await current?.close().catch(() => undefined)
}
