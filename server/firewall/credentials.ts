import type { FirewallCall } from './ports'
import { notFound } from '../common/errors'
import { editFirewall } from './commands'
import type { Credentials, Firewall } from './schema'

/** `PUT .../upstreams/{id}/credentials`: replace one upstream's credentials. */
export function setUpstreamCredentials(
  ctx: FirewallCall,
  firewallId: string,
  upstreamId: string,
  credentials: Credentials,
  ifMatch?: number,
): Promise<Firewall> {
  return editFirewall(ctx, firewallId, {
    permission: 'fw:update:credentials',
    ifMatch,
    apply: (fw) => {
      if (!fw.upstreams.some((u) => u.id === upstreamId)) throw notFound('upstream', upstreamId)
      return { ...fw, upstreams: fw.upstreams.map((u) => (u.id === upstreamId ? { ...u, credentials } : u)) }
    },
    summary: () => `credentials of upstream ${upstreamId} changed`,
  })
}

/** `PUT .../upstreams/{id}/artifact-credentials/{host}`: set the token for one artifact host. */
export function setArtifactCredentials(
  ctx: FirewallCall,
  firewallId: string,
  upstreamId: string,
  host: string,
  token: string,
  ifMatch?: number,
): Promise<Firewall> {
  return editFirewall(ctx, firewallId, {
    permission: 'fw:update:credentials',
    ifMatch,
    apply: (fw) => {
      if (!fw.upstreams.some((u) => u.id === upstreamId)) throw notFound('upstream', upstreamId)
      return {
        ...fw,
        upstreams: fw.upstreams.map((u) => {
          if (u.id !== upstreamId) return u
          const others = (u.artifactCredentials ?? []).filter((a) => a.host !== host)
          return { ...u, artifactCredentials: [...others, { host, credentials: { token } }] }
        }),
      }
    },
    summary: () => `artifact credentials of upstream ${upstreamId} for ${host} changed`,
  })
}
