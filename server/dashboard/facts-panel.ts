import type { PackageFacts, VersionFact } from '../exception-requests/package-facts'
import { card, facts, status, table } from './components'
import { href, html, time, type Html } from './html'

/** The reviewer's facts panel on the approve page: what the package is, before deciding. */

const none = html`<span class="muted">none</span>`

const notes = (panel: PackageFacts) => (panel.upstream.state === 'found' ? (panel.upstream.notes ?? {}) : {})

function scripts(version: VersionFact): Html {
  if (version.installScripts.length)
    return html`<span class="pill bad">runs ${version.installScripts.join(', ')}</span>`
  return version.installNote ? html`<span class="small">${version.installNote}</span>` : none
}

/** A fact the version lacks: "none declared" only where the ecosystem would have given one. */
const missing = (note: string | undefined, fallback: Html) =>
  note ? html`<span class="muted">not given</span>` : fallback

function advisories(version: VersionFact): Html {
  if (version.advisories === undefined) return html`<span class="muted">advisory data not available</span>`
  if (!version.advisories.length) return none
  return html`${version.advisories.map(
    (a, index) =>
      html`${index ? html`<br />` : ''}<span class="pill ${a.kind === 'malware' ? 'bad' : 'warn'}"
          >${a.kind === 'malware' ? 'malware' : (a.severity ?? 'vulnerability')}</span
        >
        <code>${a.id}</code> ${a.summary ? html`<span class="small">${a.summary}</span>` : ''}`,
  )}`
}

function upstreamNote(panel: PackageFacts): Html {
  switch (panel.upstream.state) {
    case 'found': {
      const { published, license, installScripts } = panel.upstream.notes ?? {}
      return html`<p class="small muted">
          From upstream <code>${panel.upstream.upstream}</code>: ${panel.totalVersions}
          version${panel.totalVersions === 1 ? '' : 's'}, newest first.
        </p>
        ${[
          published && `Publish dates: ${published}.`,
          license && `License: ${license}.`,
          installScripts && `Install scripts: ${installScripts}.`,
        ]
          .filter(Boolean)
          .map((line) => html`<p class="small muted" data-testid="facts-note">${line}</p>`)}`
    }
    case 'not_found':
      return html`<p class="flash error" role="status">No upstream of this firewall has a package of this name.</p>`
    case 'unreachable':
      return html`<p class="flash error" role="status" data-testid="facts-unreachable">
        Could not reach the upstream (${panel.upstream.reason}); versions, license and install scripts are not shown.
        What the firewall knows itself is below.
      </p>`
  }
}

/**
 * The panel.
 * @example factsPanel(facts, 'default', 'web')
 */
export function factsPanel(panel: PackageFacts, ns: string, fw: string): Html {
  const requested = panel.requested
  const note = notes(panel)
  const summary = requested
    ? facts([
        ['Requested version', html`<strong>${requested.version}</strong>${requested.latest ? ' (latest)' : ''}`],
        [
          'Published',
          requested.published
            ? html`${time(requested.published)} · ${requested.age} ago`
            : missing(note.published, none),
        ],
        ['License', requested.license ?? missing(note.license, html`<span class="pill warn">none declared</span>`)],
        ['Install scripts', scripts(requested)],
        ['Advisories', advisories(requested)],
        ...(requested.deprecated ? [['Deprecated', requested.deprecated] as [string, string]] : []),
      ])
    : ''
  const versions = panel.versions.length
    ? table(
        'Versions',
        ['Version', 'Published', 'Age', 'License', 'Install scripts', 'Advisories'],
        panel.versions.map((v) => [
          html`<span data-testid="fact-version">${v.version}</span
            >${v.requested ? html` <span class="badge">requested</span>` : ''}${v.latest ? html` <span class="badge">latest</span>` : ''}`,
          v.published ? time(v.published) : missing(note.published, none),
          v.age ?? '',
          v.license ?? missing(note.license, html`<span class="muted">none declared</span>`),
          scripts(v),
          advisories(v),
        ]),
      )
    : ''
  const blocks = panel.blocks.total
    ? html`<p data-testid="fact-blocks">
          Blocked ${panel.blocks.total} time${panel.blocks.total === 1 ? '' : 's'} in the last
          ${panel.blocks.windowDays} days.
        </p>
        ${table(
          'Blocked for',
          ['Who', 'Times', 'Last'],
          panel.blocks.byUser.map((b) => [
            html`<span data-testid="fact-blocked-user">${b.user}</span>`,
            String(b.count),
            time(b.last),
          ]),
        )}`
    : html`<p data-testid="fact-blocks">Not blocked in the last ${panel.blocks.windowDays} days.</p>`
  const pending = panel.otherPending.length
    ? table(
        'Other pending requests',
        ['Request', 'Version', 'Asked by', 'Asked'],
        panel.otherPending.map((p) => [
          html`<a
            href="${href('namespaces', ns, 'firewalls', fw, 'exception-requests', p.id)}"
            data-testid="fact-other-request"
            >${p.id}</a
          >`,
          p.version ?? 'every version',
          p.requestedBy,
          time(p.requestedAt),
        ]),
      )
    : html`<p class="muted">No other pending request for ${panel.packageName}.</p>`
  return card(
    `Facts about ${panel.packageName}`,
    html`${upstreamNote(panel)} ${summary}
      <h3>Versions</h3>
      ${versions || html`<p class="muted">—</p>`}
      <h3>Blocks</h3>
      ${blocks}
      <h3>Other pending requests ${panel.otherPending.length ? status(String(panel.otherPending.length)) : ''}</h3>
      ${pending}`,
    'facts',
  )
}
