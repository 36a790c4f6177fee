import { card } from '../components'
import { errorSummary, inputField, localFromIso, NO_ERRORS, type FormErrors } from '../forms'
import { html, type Html } from '../html'
import { csrfField, type Viewer } from '../layout'

/**
 * The webhook page's "Recover failed deliveries" form (the API's `POST .../recover`): a window
 * of first-attempt times, and what the last recovery queued.
 */

/** What the form shows: the values typed (`datetime-local`, UTC), their errors, and a recovery's answer. */
export interface RecoverState {
  values: { since: string; until: string }
  errors: FormErrors
  result?: { count: number; unavailable?: string[] }
}

/** Unavailable event ids listed in full up to this many; the rest are counted. */
const LISTED = 50

/** The form as first drawn: since a day ago (whole minutes, which `datetime-local` steps by), until now. */
export function freshRecoverState(now: number): RecoverState {
  const dayAgo = Math.floor((now - 86_400_000) / 60_000) * 60_000
  return { values: { since: localFromIso(new Date(dayAgo).toISOString()), until: '' }, errors: NO_ERRORS }
}

const queued = (count: number) =>
  count === 0
    ? 'No failed delivery in this window holds events to send again: nothing was queued.'
    : `${count === 1 ? '1 event' : `${count} events`} of failed deliveries queued for redelivery, oldest first, each delivery under a new webhook-id.`

function resultBlock(result: NonNullable<RecoverState['result']>): Html {
  const unavailable = result.unavailable ?? []
  const shown = unavailable.slice(0, LISTED)
  return html`<div class="flash ok" role="status" data-testid="recover-result">
    <p>${queued(result.count)}</p>
    ${
      unavailable.length
        ? html`<p>
              ${unavailable.length === 1 ? '1 event is' : `${unavailable.length} events are`} no longer held by the
              event log (past LOG_RETENTION) and cannot be sent again:
            </p>
            <ul class="small" data-testid="recover-unavailable">
              ${shown.map((eventId) => html`<li><code>${eventId}</code></li>`)}
              ${unavailable.length > LISTED ? html`<li>and ${unavailable.length - LISTED} more</li>` : ''}
            </ul>`
        : ''
    }
  </div>`
}

/** The card; `action` is the form's target (`.../webhooks/{id}/recover`). */
export function recoverCard(viewer: Viewer, action: string, state: RecoverState): Html {
  const { values, errors } = state
  return card(
    'Recover failed deliveries',
    html`${state.result ? resultBlock(state.result) : ''}
      <p class="small muted">
        Queues again the events of every delivery whose outcome was <em>failed</em> and whose first attempt lies in the
        window, once the receiver is fixed. Pacing, quarantine and the disabled state apply.
      </p>
      <form method="post" action="${action}" class="stack" novalidate>
        ${csrfField(viewer)}${errorSummary(errors)}
        <div class="grid two">
          ${inputField(errors, { label: 'Since (UTC)', name: 'since', type: 'datetime-local', value: values.since, required: true, hint: 'Not in the future.' })}
          ${inputField(errors, { label: 'Until (UTC)', name: 'until', type: 'datetime-local', value: values.until, hint: 'Empty: now. Must be after since.' })}
        </div>
        <div class="actions"><button class="button primary" type="submit">Recover failed deliveries</button></div>
      </form>`,
    'recover',
  )
}
