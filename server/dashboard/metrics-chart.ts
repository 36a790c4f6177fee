import { escapeHtml } from './html'

/**
 * A stacked bar chart over time as inline SVG (no script, no library). Colour is paired with a
 * legend and a text summary, and the numbers are in the page's table fallback.
 */

interface Series {
  name: string
  colour: string
}

interface ChartBucket {
  start: string
  values: number[]
}

const W = 520
const H = 180
const M = { top: 12, right: 12, bottom: 28, left: 40 }

/** A colour sample as SVG: a `fill` attribute, where a style attribute would break the dashboard's CSP. */
const swatch = (colour: string) =>
  `<svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill="${escapeHtml(colour)}"/></svg>`

/** Bucket start as a short UTC label: `HH:MM` for minute and hour buckets, `MM-DD` for days. */
const tick = (iso: string, daily: boolean) => (daily ? iso.slice(5, 10) : iso.slice(11, 16))

/**
 * @example stackedBars('Deliveries', [{ name: 'success', colour: '#16a34a' }], [{ start: '...', values: [3] }])
 */
export function stackedBars(title: string, series: Series[], buckets: ChartBucket[], daily = false): string {
  const totals = buckets.map((b) => b.values.reduce((a, v) => a + v, 0))
  const max = Math.max(1, ...totals)
  const plotW = W - M.left - M.right
  const plotH = H - M.top - M.bottom
  const step = plotW / Math.max(1, buckets.length)
  const barW = Math.max(1, step * 0.7)
  const y = (v: number) => M.top + plotH - (v / max) * plotH
  const parts: string[] = []
  const sums = series.map((_, i) => buckets.reduce((a, b) => a + (b.values[i] ?? 0), 0))
  const summary = series.map((s, i) => `${s.name}: ${sums[i]}`).join(', ')
  parts.push(
    `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(`${title}. Totals ${summary}`)}" preserveAspectRatio="xMidYMid meet">`,
  )
  for (const fraction of [0, 0.5, 1]) {
    const value = Math.round(max * fraction)
    parts.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(value)}" y2="${y(value)}" stroke="#e2e8f0"/>`)
    parts.push(
      `<text x="${M.left - 6}" y="${y(value) + 4}" text-anchor="end" font-size="11" fill="#64748b">${value}</text>`,
    )
  }
  buckets.forEach((bucket, i) => {
    let base = 0
    const x = M.left + i * step + (step - barW) / 2
    bucket.values.forEach((value, s) => {
      if (!value) return
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(base + value).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + value)).toFixed(1)}" fill="${series[s].colour}"><title>${escapeHtml(`${bucket.start} ${series[s].name}: ${value}`)}</title></rect>`,
      )
      base += value
    })
  })
  const labelEvery = Math.max(1, Math.ceil(buckets.length / 6))
  buckets.forEach((bucket, i) => {
    if (i % labelEvery !== 0 && i !== buckets.length - 1) return
    parts.push(
      `<text x="${(M.left + i * step + step / 2).toFixed(1)}" y="${H - 8}" text-anchor="middle" font-size="11" fill="#64748b">${escapeHtml(tick(bucket.start, daily))}</text>`,
    )
  })
  parts.push('</svg>')
  const legend = series
    .map(
      (s, i) => `<span class="legend-item">${swatch(s.colour)}${escapeHtml(s.name)} <strong>${sums[i]}</strong></span>`,
    )
    .join(' ')
  return `<figure class="chart-figure"><figcaption>${escapeHtml(title)} <span class="legend">${legend}</span></figcaption>${parts.join('')}</figure>`
}
