/**
 * A tiny escaping template tag: every interpolated value is HTML-escaped unless it is already
 * `Html` (built by this tag or `raw`). Arrays are joined, `null`/`undefined`/`false` render nothing.
 * @example html`<p>${userInput}</p>` // <p>&lt;script&gt;</p>
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

export type Renderable = Html | string | number | boolean | null | undefined | Renderable[]

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char])
}

function render(value: Renderable): string {
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0]
  values.forEach((value, i) => (out += render(value) + strings[i + 1]))
  return new Html(out)
}

/** Trusted markup (SVG built by the diagram renderer, for instance). Never pass user input. */
export const raw = (markup: string): Html => new Html(markup)

/** A path built from segments, each percent-encoded. */
export function href(...segments: (string | number)[]): string {
  return '/' + segments.map((segment) => encodeURIComponent(String(segment))).join('/')
}

/** An ISO timestamp as a `<time>` element; the client script shows it in local time. */
export function time(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`
}
