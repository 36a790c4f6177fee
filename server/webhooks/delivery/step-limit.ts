import type { RequestLoad } from '../../observability/requests-in-flight'
import { WorkLimit } from './work-limit'

/**
 * Steps (taking, sending, recording) of this process's actors running at once. Measured with
 * bench:webhooks (100 webhooks, one Redis, delivery giving way to requests): at 32, one event for
 * 100 webhooks was taken in four waves, each waiting for the round trips of the one before, and
 * the last receipt came 60-70 ms after the event in the slower bursts; at 100 every take of a
 * burst goes out at once and the light-load p99 fell to 38-50 ms.
 */
const DELIVERY_STEPS_IN_FLIGHT = 100
/**
 * Records (the heaviest step: four round trips) among them. Under the full fan-out, 100 steps in
 * flight let rule upserts reach p99 95-123 ms (32: 83-95 ms); with records held to 32, 80-91 ms.
 */
const RECORDS_IN_FLIGHT = 32
/**
 * Steps started while this process handles an HTTP request (API, registry, dashboard): the
 * request's own round trips then queue behind a few delivery continuations, not 100 chains.
 * 1, 2 and 4 measured alike; without it (32) upserts reached p99 ~170-220 ms.
 */
const STEPS_IN_FLIGHT_DURING_REQUESTS = 4

/** The work limit of one process's delivery actors, giving way to the HTTP requests it handles (`requests`). */
export function deliveryStepLimit(requests: RequestLoad): WorkLimit {
  return new WorkLimit(
    DELIVERY_STEPS_IN_FLIGHT,
    {
      busy: () => requests.count() > 0,
      limit: STEPS_IN_FLIGHT_DURING_REQUESTS,
      onIdle: (listener) => requests.onDrained(listener),
    },
    RECORDS_IN_FLIGHT,
  )
}
