import { html, type Html } from './html'

/**
 * Where an exception request stands, as a short list of plain steps in place of the machine
 * diagram (whose guard expressions are for the Machines page). It carries the live diagram's
 * attributes, so the page script moves the highlight when a reviewer decides.
 */

const STEPS: [state: string, words: string][] = [
  ['pending', 'Asked: waiting for a reviewer'],
  ['approved', 'Approved: the exception is on the firewall'],
  ['denied', 'Denied: a reviewer may still approve it later'],
  ['withdrawn', 'Withdrawn: closed without a decision'],
]

/** @example requestSteps('pending', '/namespaces/default/live/exception-requests/web/exr-1') */
export function requestSteps(status: string, liveUrl: string): Html {
  return html`<figure class="diagram steps" data-live-src="${liveUrl}" data-live-state="${status}">
    <ol class="step-list">
      ${STEPS.map(
        ([state, words]) =>
          html`<li data-state="${state}" class="step${state === status ? ' is-active' : ''}">${words}</li>`,
      )}
    </ol>
    <figcaption class="small muted">
      <span class="live-dot" aria-hidden="true"></span> Updates by itself when the request is decided
      <span class="visually-hidden" data-live-field="path">${status}</span>
      <span data-live-status></span>
    </figcaption>
  </figure>`
}
