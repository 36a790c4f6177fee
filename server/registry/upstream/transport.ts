import type { Agent } from 'undici'
import { upstreamAddressPolicy, type UpstreamAddressSettings } from '../../net/address-policy'
import { createGuardedAgent } from '../../net/guarded-agent'
import { DEFAULT_UPSTREAM_BODY_LIMITS, type UpstreamBodyLimits } from './body-limit'

/**
 * How the proxy reaches upstream registries: one pooled connection agent bound to the upstream
 * address policy, and the size bounds of their answers. Built once by the composition root from
 * AppConfig (services.ts) and reached through the registry's ports (`upstreamTransport`).
 */
export interface UpstreamTransport {
  /** `UPSTREAM_MAX_BODY` and `UPSTREAM_MAX_ARTIFACT` (body-limit.ts). */
  readonly limits: UpstreamBodyLimits
  /** The agent (built lazily, so processes that never call an upstream load and open nothing). */
  agent(): Promise<Agent>
  /** Closes the pooled connections (shutdown); a later call builds a new agent. */
  close(): Promise<void>
}

/**
 * @example const transport = createUpstreamTransport(config.upstreamAddresses, config.upstreamSizes)
 */
export function createUpstreamTransport(
  settings: UpstreamAddressSettings,
  limits: UpstreamBodyLimits = DEFAULT_UPSTREAM_BODY_LIMITS,
): UpstreamTransport {
  const policy = upstreamAddressPolicy(settings)
  let agent: Promise<Agent> | null = null
  return {
    limits,
    agent: () => (agent ??= createGuardedAgent(policy)),
    async close() {
      const current = agent
      agent = null
      await (await current)?.close().catch(() => undefined)
    },
  }
}
