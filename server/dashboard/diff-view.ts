import { html, type Html } from './html'
import { diffJson, hunks } from './line-diff'

/** The configuration without the bookkeeping every version changes (version, updatedAt). */
function configOf(firewall: object): object {
  const { version: _v, updatedAt: _u, ...config } = firewall as Record<string, unknown>
  return config
}

/**
 * A unified diff of two firewall versions as an HTML table: old and new line numbers, a +/-
 * marker (so the change is readable without colour) and the line.
 */
export function diffView(before: object, after: object, labels: [string, string]): Html {
  const parts = hunks(diffJson(configOf(before), configOf(after)))
  if (!parts.length) return html`<p class="empty">No differences between ${labels[0]} and ${labels[1]}.</p>`
  const added = parts.reduce((n, h) => n + h.lines.filter((l) => l.kind === 'add').length, 0)
  const removed = parts.reduce((n, h) => n + h.lines.filter((l) => l.kind === 'del').length, 0)
  const rows = parts.map(
    (hunk) =>
      html`<tbody>
        <tr class="hunk">
          <td colspan="4">@@ ${labels[0]} line ${hunk.oldStart} · ${labels[1]} line ${hunk.newStart} @@</td>
        </tr>
        ${hunk.lines.map(
          (line) =>
            html`<tr class="${line.kind}">
              <td class="ln">${line.oldNo ?? ''}</td>
              <td class="ln">${line.newNo ?? ''}</td>
              <td class="mark">${line.kind === 'add' ? '+' : line.kind === 'del' ? '−' : ''}</td>
              <td class="text">${line.text}</td>
            </tr>`,
        )}
      </tbody>`,
  )
  return html`<p class="small">
      <span class="diff-stat add">+${added}</span> <span class="diff-stat del">−${removed}</span> lines, from
      ${labels[0]} to ${labels[1]}
    </p>
    <div class="table-wrap" tabindex="0" role="region" aria-label="Differences">
      <table class="diff">
        <caption class="visually-hidden">
          Line diff from ${labels[0]} to ${labels[1]}
        </caption>
        ${rows}
      </table>
    </div>`
}
