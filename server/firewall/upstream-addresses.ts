import { isIP } from 'node:net'
import { invalid, type FieldError } from '../common/errors'
import { judgeAddress, upstreamAddressPolicy, type UpstreamAddressSettings } from '../net/address-policy'
import type { Upstream } from './schema'

/**
 * Save-time check of upstream endpoints: no userinfo in the URL, and a
 * literal-IP host must be allowed by the upstream address policy. Names are judged at every
 * connection instead (they may resolve differently later). Only new or changed endpoints are
 * checked, so a firewall stored before a setting changed stays editable; its connections are
 * refused all the same.
 */
export function refuseRefusedEndpoints(
  settings: UpstreamAddressSettings,
  next: readonly Upstream[],
  previous: readonly Upstream[] = [],
): void {
  const known = new Set(previous.map((upstream) => upstream.endpoint))
  const policy = upstreamAddressPolicy(settings)
  const userinfo: FieldError[] = []
  const refused: FieldError[] = []
  next.forEach((upstream, index) => {
    if (known.has(upstream.endpoint)) return
    const path = `upstreams[${index}].endpoint`
    let url: URL
    try {
      url = new URL(upstream.endpoint)
    } catch {
      return // the schema already refused it
    }
    if (url.username || url.password) {
      userinfo.push({ path, message: 'must not carry credentials (use the upstream credentials field)' })
    }
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (!isIP(host)) return
    const verdict = judgeAddress(host, policy)
    if (!verdict.allowed) refused.push({ path, message: verdict.reason })
  })
  if (userinfo.length) throw invalid('upstream_endpoint_userinfo', describe(userinfo), userinfo)
  if (refused.length) {
    const hint =
      'refused by the upstream address policy (an operator may exempt a network with UPSTREAM_ALLOWED_NETWORKS, ' +
      'unless UPSTREAM_DENIED_NETWORKS names it)'
    throw invalid('upstream_address_refused', `${describe(refused)}: ${hint}`, refused)
  }
}

const describe = (errors: FieldError[]) => errors.map((error) => `${error.path}: ${error.message}`).join('; ')
