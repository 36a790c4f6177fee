import type { AdvisoryStatus } from '../../advisories/status'
import { BLOCK_SCAN_LIMIT, blockSummary, type BlockSummary } from '../../firewall/block-summary'
import { topBlocked, windowDays, type Coverage } from '../../firewall/block-tally'
import { listFirewalls } from '../../firewall/queries'
import { card, heading, status, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, raw, time, type Html } from '../html'
import { layout } from '../layout'
import { stackedBars } from '../metrics-chart'
import { queue, requestsOf } from './exception-requests'
import { listExposures } from '../../exposures/queries'
import { openExposureCounts } from '../../exposures/open-counts'
import type { ExposureData } from '../../events/schemas'

/**
 * `/namespaces/{ns}`: the owner's overview of the firewalls the viewer can read: pending
 * exception requests, blocks per day for 30 days per firewall, the most blocked packages, open
 * exposures and the advisory data status.
 */

const DAYS = 30
/**
 * Log entries one view may read across all firewalls: each firewall gets an equal share, at most
 * BLOCK_SCAN_LIMIT, at least OVERVIEW_SCAN_FLOOR, so a namespace of many busy firewalls costs one
 * view about as much as four busy ones (a partial count says from when it is complete).
 */
export const OVERVIEW_SCAN_BUDGET = 200_000
const OVERVIEW_SCAN_FLOOR = 2_000

/** Log entries each of `firewalls` may have read for one overview. */
export function overviewScanLimit(firewalls: number): number {
  return Math.max(
    OVERVIEW_SCAN_FLOOR,
    Math.min(BLOCK_SCAN_LIMIT, Math.floor(OVERVIEW_SCAN_BUDGET / Math.max(1, firewalls))),
  )
}
const TOP = 10
/** Firewalls drawn as their own series; the rest are summed as one. */
const SERIES = 8
const COLOURS = ['#dc2626', '#2563eb', '#16a34a', '#f59e0b', '#7c3aed', '#0891b2', '#db2777', '#65a30d']
const OTHERS = '#94a3b8'

function blocksChart(summaries: BlockSummary[]): Html {
  const days = windowDays(summaries[0].tally.window)
  const ranked = [...summaries].sort((a, b) => sum(b.tally.perDay) - sum(a.tally.perDay))
  const shown = ranked.slice(0, SERIES)
  const rest = ranked.slice(SERIES)
  const series = shown.map((s, i) => ({ name: s.firewall, colour: COLOURS[i] }))
  if (rest.length) series.push({ name: `${rest.length} other firewalls`, colour: OTHERS })
  const buckets = days.map((start, d) => ({
    start,
    values: [...shown.map((s) => s.tally.perDay[d]), ...(rest.length ? [sum(rest.map((s) => s.tally.perDay[d]))] : [])],
  }))
  return raw(stackedBars(`Blocks per day, last ${DAYS} days (UTC)`, series, buckets, true))
}

const sum = (values: number[]) => values.reduce((a, v) => a + v, 0)

function coverageNote(c: Coverage): Html {
  if (c.complete) return html`<span class="muted small">complete</span>`
  return c.reason === 'scan_limit'
    ? html`<span class="pill warn">partial</span>
        <span class="small">counted from ${time(c.from)} only: the log has more decisions than one view reads</span>`
    : html`<span class="pill warn">partial</span>
        <span class="small">LOG_RETENTION keeps the log's decisions from ${time(c.from)} on only</span>`
}

function blocksSection(ns: string, summaries: BlockSummary[]): Html {
  if (!summaries.length) return card('Blocks per day', html`<p class="empty">No firewall you can read yet.</p>`)
  const today = summaries[0].tally.window.days - 1
  const partial = summaries.filter((s) => !s.coverage.complete)
  const rows = summaries.map((s) => [
    html`<a href="${href('namespaces', ns, 'firewalls', s.firewall)}">${s.firewall}</a>`,
    String(sum(s.tally.perDay)),
    String(s.tally.perDay[today]),
    html`<a href="${href('namespaces', ns, 'firewalls', s.firewall, 'log')}?blocked=true">blocked decisions</a>`,
    coverageNote(s.coverage),
  ])
  return card(
    'Blocks per day',
    html`${
      partial.length
        ? html`<div class="flash warn" role="status" data-testid="blocks-partial">
            The counts of ${partial.map((s) => s.firewall).join(', ')} are partial: the decision log is their only
            source and does not cover all ${DAYS} days (see the table).
          </div>`
        : ''
    }
    ${blocksChart(summaries)}
    ${table('Blocks per firewall', ['Firewall', `Blocks (${DAYS} days)`, 'Today', 'Log', 'Data'], rows)}`,
    'blocks',
  )
}

function topSection(ns: string, summaries: BlockSummary[]): Html {
  const top = topBlocked(
    summaries.map((s) => ({ firewall: s.firewall, tally: s.tally })),
    TOP,
  )
  return card(
    'Most blocked packages',
    table(
      'Most blocked packages',
      ['Package', 'Ecosystem', 'Blocks', 'Firewalls', 'Last blocked', 'Rule'],
      top.map((p) => [
        html`<strong>${p.packageName}</strong>`,
        html`<span class="badge">${p.ecosystem}</span>`,
        String(p.count),
        p.firewalls.map(
          (fw, i) =>
            html`${i ? ', ' : ''}<a
                href="${href('namespaces', ns, 'firewalls', fw, 'log')}?blocked=true&packageName=${encodeURIComponent(p.packageName)}"
                >${fw}</a
              >`,
        ),
        time(p.lastBlockedAt),
        p.rule ? html`<code>${p.rule}</code>` : '',
      ]),
      `Nothing was blocked in the last ${DAYS} days.`,
    ),
    'top-blocked',
  )
}

function advisorySection(advisories: AdvisoryStatus, ecosystems: Set<string>): Html {
  const rows = advisories.ecosystems
    .filter((e) => ecosystems.size === 0 || ecosystems.has(e.ecosystem))
    .map((e) => [
      html`<span class="badge">${e.ecosystem}</span>`,
      e.source,
      !e.loaded ? status('not loaded') : e.stale ? status('stale') : status('current'),
      String(e.records),
      time(e.lastRefresh),
      time(e.lastChange),
      e.lastError ? html`<span class="small">${e.lastError.message}</span>` : html`<span class="muted">—</span>`,
    ])
  const feed = advisories.feed.enabled
    ? html`The feed is refreshed every ${advisories.feed.refresh}.`
    : html`The feed is off (ADVISORY_FEED_URL).`
  const dir = advisories.directory.configured
    ? html` ADVISORY_DIR is ${advisories.directory.loaded ? 'loaded' : 'set but not loaded'}.`
    : ''
  return card(
    'Advisory data',
    html`<p class="muted small">${feed}${dir} Vulnerability and malware rules decide on this data.</p>
      ${table(
        'Advisory data status',
        ['Ecosystem', 'Source', 'Status', 'Records', 'Last refresh', 'Last change', 'Last error'],
        rows,
      )}`,
    'advisories',
  )
}

/** Open exposures listed on the overview; the Exposures page has the rest. */
const EXPOSURES_SHOWN = 10

function exposuresSection(ns: string, counts: Map<string, number>, newest: ExposureData[]): Html {
  const total = sum([...counts.values()])
  const rows = newest.map((e) => [
    time(e.detectedAt),
    html`<a href="${href('namespaces', ns, 'firewalls', e.firewall)}">${e.firewall}</a>`,
    html`<strong>${e.packageName}</strong><span class="muted">@${e.version}</span>`,
    html`<strong>${e.advisory.id}</strong>
      <span class="pill ${e.advisory.kind === 'malware' ? 'bad' : 'warn'}">${e.advisory.kind}</span>`,
    html`<span class="small">${e.servedTo.join(', ')}</span>`,
  ])
  return card(
    `Open exposures (${total})`,
    html`${table(
        'Open exposures',
        ['Detected', 'Firewall', 'Package', 'Advisory', 'Served to'],
        rows,
        'No served version has been named by advisory data since it was served.',
      )}
      <p>
        <a href="${href('namespaces', ns, 'exposures')}"
          >All exposures${total > newest.length ? ` (${total - newest.length} more open)` : ''} →</a
        >
      </p>`,
    'open-exposures',
  )
}

export async function overviewPage(req: DashboardRequest) {
  const { ns } = req.viewer
  const firewalls = await listFirewalls(req.ctx)
  const ids = firewalls.map((fw) => fw.id)
  const scanLimit = overviewScanLimit(ids.length)
  const retentionMs = req.services.config.logRetentionMs
  const [pending, summaries, exposureCounts, exposures] = await Promise.all([
    requestsOf(req, ids, ['pending']),
    Promise.all(ids.map((id) => blockSummary(req.ctx, id, { days: DAYS, retentionMs, scanLimit }))),
    openExposureCounts(req.ctx),
    listExposures(req.ctx, { status: 'open', limit: EXPOSURES_SHOWN }),
  ])
  const requests = card(
    `Pending exception requests (${pending.length})`,
    html`${queue(req, pending)}
      <p><a href="${href('namespaces', ns, 'exception-requests')}">All exception requests →</a></p>`,
    'pending',
  )
  const body = html`${heading('Overview', '', `What the ${firewalls.length === 1 ? 'firewall' : `${firewalls.length} firewalls`} you can read in ${ns} did lately.`)}
  ${requests} ${exposuresSection(ns, exposureCounts, exposures.exposures)} ${blocksSection(ns, summaries)}
  ${topSection(ns, summaries)}
  ${advisorySection(req.services.advisories.status(), new Set(firewalls.map((fw) => fw.ecosystem)))}`
  return layout({ title: 'Overview', section: 'overview', viewer: req.viewer, flash: req.flash, body })
}
