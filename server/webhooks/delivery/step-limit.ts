import { onRequestsDrained, requestsInFlight } from '../../app/requests-in-flight'
import { WorkLimit } from './work-limit'

/**
 * Steps (taking, sending, recording) of this process's actors running at once: enough to keep
 * Redis and the receivers busy (a step is a round trip or two). Measured with bench:webhooks
 * (100 webhooks at the pacing ceiling, one Redis, delivery giving way to requests): 16, 24 and 32
 * all reach the ceiling with rule upserts at p99 50-85 ms; 64 and 100 let upserts drift to
 * 90 ms and slow the light-load bursts.
 */
const DELIVERY_STEPS_IN_FLIGHT = 32
/**
 * Steps started while this process handles an HTTP request (API, registry, dashboard): the
 * request's own round trips then queue behind a few delivery continuations, not 32 chains.
 * 1, 2 and 4 measured alike; without it (32) upserts reached p99 ~170-220 ms.
 */
const STEPS_IN_FLIGHT_DURING_REQUESTS = 4

/** The work limit of one process's delivery actors, giving way to the HTTP requests it handles. */
export function deliveryStepLimit(): WorkLimit {
  return new WorkLimit(DELIVERY_STEPS_IN_FLIGHT, {
    busy: () => requestsInFlight() > 0,
    limit: STEPS_IN_FLIGHT_DURING_REQUESTS,
    onIdle: onRequestsDrained,
  })
}
