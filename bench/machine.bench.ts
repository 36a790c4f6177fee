/**
 * The delivery machine's own cost per delivery, in one process with nothing else: 100 actors, each
 * told of one buffered event per round, with a take and an attempt that succeed at once (the
 * service's `promiseActor` steps, no storage, no HTTP). Prints the machine's microsteps, actors
 * and snapshots per delivery (XState's inspection events, exact) and the CPU per delivery (varies
 * with the machine: compare builds in the same run). What the service adds around each step
 * (snapshots stored, the live view, records) is not in it.
 *   npm run bench:machine            (ROUNDS=400 rounds of 100 deliveries)
 */
import { createActor, type InspectionEvent } from 'xstate'
import { webhookDeliveryMachine } from '../machines/webhook-delivery.machine'
import type {
  AttemptReport,
  DeliverBatchInput,
  TakeBatchInput,
  TakeBatchOutput,
} from '../machines/webhook-delivery/types'
import { promiseActor } from '../server/webhooks/delivery/promise-actor'

const ROUNDS = Number(process.env.ROUNDS ?? 400)
const WARM_ROUNDS = 50
const ACTORS = 100

let now = 1_000_000
const settings = {
  retryScheduleMs: [1_000, 2_000],
  quarantineMs: 60_000,
  rate: 1_000_000,
  backlogNoticeThreshold: 1_000,
}
const machine = webhookDeliveryMachine.provide({
  actors: {
    takeBatch: promiseActor<TakeBatchOutput, TakeBatchInput>(async () => ({
      batch: { deliveryId: `whdel_${now}`, eventIds: ['evt_1'] },
      bufferedEvents: 0,
      now,
    })),
    deliverBatch: promiseActor<AttemptReport, DeliverBatchInput>(async () => ({
      outcome: { kind: 'success', responseStatus: 204, responseBody: '', durationMillis: 1 },
      startedAt: now,
      finishedAt: now,
      bufferedEvents: 0,
    })),
  },
})

const inspected = new Map<string, number>()
const inspect = (event: InspectionEvent) => inspected.set(event.type, (inspected.get(event.type) ?? 0) + 1)

/** ACTORS actors at rest; `round` tells each of one event and resolves once all are at rest again, delivered. */
function fleet(options: { inspect?: typeof inspect } = {}) {
  let resting = 0
  let allResting: () => void = () => undefined
  const actors = Array.from({ length: ACTORS }, (_, i) => {
    const actor = createActor(machine, { input: { webhookId: `bench/wh${i}`, now, settings }, ...options })
    let busy = false
    actor.subscribe((snapshot) => {
      if (snapshot.value !== 'active') busy = true
      else if (busy) {
        busy = false
        if (++resting === ACTORS) allResting()
      }
    })
    return actor.start()
  })
  return async function round(): Promise<void> {
    now += 1_000
    resting = 0
    const done = new Promise<void>((resolve) => (allResting = resolve))
    for (const actor of actors) actor.send({ type: 'EVENTS_BUFFERED', bufferedEvents: 1, now })
    await done
  }
}

// Counted on a fleet of its own: inspection costs CPU, so the timed fleet runs without it.
const counted = fleet({ inspect })
inspected.clear()
await counted()
const round = fleet()
for (let i = 0; i < WARM_ROUNDS; i++) await round()
const cpuBefore = process.cpuUsage()
for (let i = 0; i < ROUNDS; i++) await round()
const cpu = process.cpuUsage(cpuBefore)
const deliveries = ROUNDS * ACTORS
const per = (type: string) => ((inspected.get(type) ?? 0) / ACTORS).toFixed(2)
console.log(`delivery machine: ${ACTORS} actors, ${deliveries} deliveries (a take and an attempt each, no I/O)`)
console.log(
  `  per delivery: ${per('@xstate.microstep')} microsteps, ${per('@xstate.event')} events, ${per('@xstate.actor')} actors started, ${per('@xstate.snapshot')} snapshots`,
)
console.log(`  CPU ${((cpu.user + cpu.system) / deliveries).toFixed(1)} µs per delivery`)
