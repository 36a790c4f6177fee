import { ecosystemProfile, type EcosystemProfile } from '../firewall/ecosystems'
import type { Ecosystem } from '../firewall/schema'
import { handleMaven } from './maven/proxy'
import { handleNpm } from './npm/proxy'
import { handleNuget } from './nuget/proxy'
import { handlePypi } from './pypi/proxy'
import type { ProxyRequest } from './proxy-request'

/**
 * One ecosystem as the registry proxy serves it: the domain profile (OSV name, name
 * normalisation, version ordering, selectors, license source: server/firewall/ecosystems.ts)
 * plus the protocol handler for `/registry/{ns}/{fw}/...`.
 */
interface EcosystemProtocol extends EcosystemProfile {
  handle(request: ProxyRequest): Promise<void>
  /** Refusals also carry their text in the HTTP reason phrase (clients that print only the status line). */
  reasonPhrase: boolean
}

// A Record over every ecosystem: adding one to ECOSYSTEMS without its protocol is a compile error.
const PROTOCOLS: Record<Ecosystem, EcosystemProtocol> = {
  // npm prints the JSON body's `error`.
  npm: { ...ecosystemProfile('npm'), handle: handleNpm, reasonPhrase: false },
  // pip, twine, Maven and NuGet print the status line, not a body.
  pypi: { ...ecosystemProfile('pypi'), handle: handlePypi, reasonPhrase: true },
  maven: { ...ecosystemProfile('maven'), handle: handleMaven, reasonPhrase: true },
  nuget: { ...ecosystemProfile('nuget'), handle: handleNuget, reasonPhrase: true },
}

/**
 * The registry protocol of an ecosystem.
 * @example await ecosystemProtocol(firewall.ecosystem).handle(request)
 */
export function ecosystemProtocol(ecosystem: Ecosystem): EcosystemProtocol {
  return PROTOCOLS[ecosystem]
}
