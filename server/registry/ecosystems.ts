import { ecosystemProfile, type EcosystemProfile } from '../firewall/ecosystems'
import type { IncomingHttpHeaders } from 'node:http'
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
  /** Whether refusals also carry their text in the HTTP reason phrase (clients that print only the status line). */
  reasonPhrase(method: string, headers: IncomingHttpHeaders): boolean
}

/**
 * npm-family clients that print a refusal's reason phrase but never its body: yarn 4
 * (`Response Code: 403 (<reason>)`; it sends got's User-Agent), yarn 1 and pnpm up to 11
 * (`GET <url>: <reason> - 403`), pnpm 12 for a packument. npm prints the body's `error` after
 * the status line, so it gets no phrase (no repeat). pnpm 12's tarballs and bun print neither
 * (npm/whole-package-block.ts and npm/block-notice.ts).
 */
const STATUS_LINE_NPM_CLIENTS = /^(?:pnpm\/|yarn\/|got \()/i

const always = () => true

// A Record over every ecosystem: adding one to ECOSYSTEMS without its protocol is a compile error.
const PROTOCOLS: Record<Ecosystem, EcosystemProtocol> = {
  npm: {
    ...ecosystemProfile('npm'),
    handle: handleNpm,
    // Downloads only: on a publish yarn and pnpm print the body's `error` too.
    reasonPhrase: (method, headers) =>
      (method === 'GET' || method === 'HEAD') && STATUS_LINE_NPM_CLIENTS.test(String(headers['user-agent'] ?? '')),
  },
  // pip, poetry, twine, Maven, Gradle and NuGet print the status line, not a body.
  pypi: { ...ecosystemProfile('pypi'), handle: handlePypi, reasonPhrase: always },
  maven: { ...ecosystemProfile('maven'), handle: handleMaven, reasonPhrase: always },
  nuget: { ...ecosystemProfile('nuget'), handle: handleNuget, reasonPhrase: always },
}

/**
 * The registry protocol of an ecosystem.
 * @example await ecosystemProtocol(firewall.ecosystem).handle(request)
 */
export function ecosystemProtocol(ecosystem: Ecosystem): EcosystemProtocol {
  return PROTOCOLS[ecosystem]
}
