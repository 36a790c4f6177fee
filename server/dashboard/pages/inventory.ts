import { getFirewall } from '../../firewall/queries'
import { firewallInventory, firewallSbom } from '../../inventory/queries'
import { CYCLONEDX_JSON } from '../../inventory/sbom'
import { invalid } from '../../common/errors'
import { card, heading, table } from '../components'
import type { DashboardRequest, Download } from '../handler'
import { href, html, time } from '../html'
import { layout } from '../layout'

/**
 * `/namespaces/{ns}/firewalls/{fw}/inventory`: the package versions the firewall served, searched
 * by package name and paged by cursor, with the SBOM of a period to download.
 */

const PAGE = 50
/** Principals named in a row; the rest are counted. */
const NAMED = 5

/** A `date` input's value (a UTC day) as the ISO instant starting it, or ending it for `until`. */
function day(value: string | null, field: 'since' | 'until'): string | undefined {
  if (!value) return undefined
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN
  if (Number.isNaN(ms))
    throw invalid('invalid_filter', `${field} is not a date`, [{ path: field, message: 'not a date (YYYY-MM-DD)' }])
  return new Date(field === 'until' ? ms + 86_400_000 - 1 : ms).toISOString()
}

export async function inventoryPage(req: DashboardRequest) {
  const { ns } = req.viewer
  const fw = await getFirewall(req.ctx, req.params.fw)
  const q = req.query
  const packageName = q.get('packageName')?.trim() || undefined
  const page = await firewallInventory(req.ctx, fw.id, {
    packageName,
    limit: PAGE,
    cursor: q.get('cursor') || undefined,
  })
  const base = href('namespaces', ns, 'firewalls', fw.id, 'inventory')
  const rows = page.entries.map((e) => [
    html`<strong>${e.packageName}</strong>`,
    html`<code>${e.version}</code>`,
    time(e.firstServedAt),
    time(e.lastServedAt),
    String(e.count),
    html`<span class="small">${e.servedTo.slice(0, NAMED).join(', ')}</span>${
        e.servedTo.length > NAMED ? html` <span class="muted small">and ${e.servedTo.length - NAMED} more</span>` : ''
      }`,
  ])
  const next = new URLSearchParams(q)
  if (page.nextCursor) next.set('cursor', page.nextCursor)
  const search = html`<form method="get" class="filters" action="${base}" role="search">
    <label
      >Package <input type="search" name="packageName" value="${packageName ?? ''}" placeholder="exact name"
    /></label>
    <div class="actions">
      <button class="button primary" type="submit">Search</button>
      <a class="button subtle" href="${base}">Clear</a>
    </div>
  </form>`
  const today = new Date(req.services.clock.now()).toISOString().slice(0, 10)
  const sbom = html`<p class="muted small">
      CycloneDX 1.5 JSON: one component, with its purl, per version served in the period (both days included; an empty
      field means unbounded).
    </p>
    <form method="get" class="filters" action="${base}/sbom">
      <label>Since (UTC day) <input type="date" name="since" /></label>
      <label>Until (UTC day) <input type="date" name="until" value="${today}" /></label>
      <div class="actions"><button class="button" type="submit">Download SBOM</button></div>
    </form>`
  const body = html`${heading(
    html`Inventory of ${fw.name}`,
    html`<a class="button" href="${href('namespaces', ns, 'firewalls', fw.id)}">Configuration</a>`,
    'Every package version this firewall served, when first and last, how often and to whom.',
  )}
  ${card('Search', search)} ${card('SBOM', sbom, 'sbom')}
  ${card(
    'Served versions',
    html`${table(
        'Served versions',
        ['Package', 'Version', 'First served', 'Last served', 'Downloads', 'Served to'],
        rows,
        packageName ? 'This firewall never served that package.' : 'This firewall has served nothing yet.',
      )}
      <p>
        ${q.get('cursor') ? html`<a class="button subtle" href="${base}${packageName ? `?packageName=${encodeURIComponent(packageName)}` : ''}">← First page</a>` : ''}
        ${page.nextCursor ? html`<a class="button" href="?${next.toString()}">Next page →</a>` : ''}
      </p>`,
    'served',
  )}`
  return layout({
    title: `Inventory of ${fw.name}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Firewalls', href('namespaces', ns, 'firewalls')],
      [fw.name, href('namespaces', ns, 'firewalls', fw.id)],
    ],
    body,
  })
}

/** The SBOM period of the inventory page's form, as ISO instants (undefined: unbounded). */
export function sbomPeriod(query: URLSearchParams): { since?: string; until?: string } {
  return { since: day(query.get('since'), 'since'), until: day(query.get('until'), 'until') }
}

/** `/namespaces/{ns}/firewalls/{fw}/inventory/sbom?since=&until=`: the SBOM the API serves, as a file. */
export async function sbomDownload(req: DashboardRequest): Promise<Download> {
  const period = sbomPeriod(req.query)
  const body = await firewallSbom(req.ctx, req.params.fw, period)
  const day = (iso: string | undefined, fallback: string) => iso?.slice(0, 10) ?? fallback
  const filename = `${req.params.fw}-sbom-${day(period.since, 'start')}-${day(period.until, 'now')}.cdx.json`
  return { filename, contentType: CYCLONEDX_JSON, body }
}
