import type { AnyStateMachine } from 'xstate'
import { drawMachine } from './diagram'
import { html, raw, type Html } from './html'

/**
 * A machine diagram with one actor's state highlighted, kept current by the page script: it
 * opens an EventSource on `liveUrl` and moves the highlight (and fills `[data-live-field]`
 * elements) on every `state` message.
 */
export async function liveDiagram(
  machine: AnyStateMachine,
  value: unknown,
  liveUrl: string,
  caption: string,
): Promise<Html> {
  const svg = await drawMachine(machine, value, { title: caption })
  return html`<figure
    class="diagram"
    data-live-src="${liveUrl}"
    data-live-state="${typeof value === 'string' ? value : JSON.stringify(value)}"
  >
    <div class="diagram-scroll" tabindex="0" role="region" aria-label="${caption}">${raw(svg)}</div>
    <figcaption>
      <span class="live-dot" aria-hidden="true"></span> ${caption} · current state
      <strong data-live-field="path">${describe(value)}</strong> <span class="small muted" data-live-status>live</span>
    </figcaption>
  </figure>`
}

/** `{ delivering: 'sending' }` as `delivering.sending`. */
function describe(value: unknown): string {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}.${describe(v)}`)
      .join(', ')
  return String(value)
}
