import { csrfField, type Viewer } from './layout'
import { html, type Html, type Renderable } from './html'

/** Small building blocks shared by the pages. */

/** A one-button form posting to `action` (with CSRF); `confirm` asks first (client script). */
export function postButton(
  viewer: Viewer,
  action: string,
  label: string,
  options: { kind?: 'primary' | 'danger' | 'subtle'; confirm?: string; fields?: Record<string, string> } = {},
): Html {
  const hidden = Object.entries(options.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  )
  return html`<form
    method="post"
    action="${action}"
    class="inline"
    ${options.confirm ? html` data-confirm="${options.confirm}"` : ''}
  >
    ${csrfField(viewer)}${hidden}<button type="submit" class="button ${options.kind ?? ''}">${label}</button>
  </form>`
}

/** A table that scrolls sideways on narrow screens instead of breaking the layout. */
export function table(caption: string, head: string[], rows: Renderable[][], empty = 'Nothing here yet.'): Html {
  if (!rows.length) return html`<p class="empty">${empty}</p>`
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption}">
    <table>
      <caption class="visually-hidden">
        ${caption}
      </caption>
      <thead>
        <tr>
          ${head.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row) =>
            html`<tr>
              ${row.map((cell) => html`<td>${cell}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`
}

const STATUS_TONES: Record<string, string> = {
  pending: 'warn',
  approved: 'ok',
  denied: 'bad',
  withdrawn: 'muted',
  success: 'ok',
  failed: 'bad',
  retrying: 'warn',
  active: 'ok',
  delivering: 'info',
  dispatching: 'info',
  pacing: 'info',
  quarantined: 'bad',
  blocked: 'bad',
  allowed: 'ok',
  expired: 'bad',
  'upstream error': 'warn',
  current: 'ok',
  stale: 'warn',
  'not loaded': 'bad',
  open: 'bad',
  acknowledged: 'muted',
}

/** A coloured status pill. */
export const status = (value: string): Html =>
  html`<span class="pill ${STATUS_TONES[value] ?? 'muted'}">${value}</span>`

/** A definition list of label/value pairs. */
export function facts(pairs: [string, Renderable][]): Html {
  return html`<dl class="facts">
    ${pairs.map(
      ([k, v]) =>
        html`<div>
          <dt>${k}</dt>
          <dd>${v}</dd>
        </div>`,
    )}
  </dl>`
}

/** Pretty JSON in a scrollable block. */
export const json = (value: unknown, label = 'JSON'): Html =>
  html`<pre class="code" tabindex="0" aria-label="${label}">${JSON.stringify(value, null, 2)}</pre>`

/** Page heading with optional actions on the right. */
export const heading = (title: Renderable, actions?: Renderable, subtitle?: Renderable): Html =>
  html`<div class="page-head">
    <div>
      <h1>${title}</h1>
      ${subtitle ? html`<p class="muted">${subtitle}</p>` : ''}
    </div>
    ${actions ? html`<div class="actions">${actions}</div>` : ''}
  </div>`

/** A titled card section. */
export const card = (title: string, body: Renderable, id?: string): Html =>
  html`<section class="card" ${id ? html` id="${id}"` : ''} aria-labelledby="${id ?? slug(title)}-h">
    <h2 id="${id ?? slug(title)}-h">${title}</h2>
    ${body}
  </section>`

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-')
