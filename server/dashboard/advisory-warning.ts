import type { AdvisoryStatus } from '../advisories/status'
import { ruleNeedsAdvisories } from '../advisories/needs-advisories'
import type { Firewall } from '../firewall/schema'
import { html, time, type Html } from './html'

/**
 * A warning for a firewall whose vulnerability or malware rules, its own or inherited through
 * `extends`, decide on advisory data that is missing, not loaded, or older than 3 x
 * ADVISORY_REFRESH; nothing otherwise. `chain` is the firewall first, then its bases (as
 * `firewallChain` resolves them for a decision).
 * @example advisoryWarning((await firewallChain(services, ns, fw)).map((l) => l.firewall), services.advisories.status())
 */
export function advisoryWarning(chain: readonly Firewall[], status: AdvisoryStatus): Html | null {
  const [firewall] = chain
  if (!firewall) return null
  const deciding = chain.filter((fw) => fw.rules.some(ruleNeedsAdvisories))
  if (deciding.length === 0) return null
  const row = status.ecosystems.find((e) => e.ecosystem === firewall.ecosystem)
  if (!row || !row.stale) return null
  const error = row.lastError ? html` Last error: ${row.lastError.message}.` : ''
  const bases = deciding.filter((fw) => fw !== firewall).map((fw) => fw.id)
  const inherited = bases.length ? html` (including those inherited from ${bases.join(', ')})` : ''
  let text: Html
  if (!row.loaded) {
    text = html`Advisory data for ${row.ecosystem} is not loaded: downloads this firewall's vulnerability and malware
    rules${inherited} decide are refused (503) until it loads.${error}`
  } else if (row.source === 'none') {
    text = html`No advisory data is configured (ADVISORY_FEED_URL is off and ADVISORY_DIR is unset): this firewall's
    vulnerability and malware rules${inherited} match nothing.`
  } else if (row.lastRefresh === null) {
    text = html`Advisory data for ${row.ecosystem} does not come from the feed yet (source: ${row.source}).${error}`
  } else {
    text = html`Advisory data for ${row.ecosystem} was last refreshed ${time(row.lastRefresh)}, more than 3 x
    ADVISORY_REFRESH (${status.feed.refresh}) ago: this firewall's vulnerability and malware rules${inherited} decide on
    old data.${error}`
  }
  return html`<div class="flash warn" role="status" data-testid="advisory-warning">${text}</div>`
}
