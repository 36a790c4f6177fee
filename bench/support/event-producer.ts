import type { Backend } from '../../storage'
import { makeEvent } from '../../server/events/factory'
import { systemClock } from '../../server/common/clock'

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** A ping event of `family` for namespace `ns`. */
const ping = (ns: string, family: string) =>
  makeEvent(systemClock, ns, `audit.${family}.ping`, {
    action: `${family}.ping`,
    outcome: 'success' as const,
    statusCode: 200,
  })

/** Polls `condition` every 20 ms; false when `timeoutMs` passed first. */
export async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

/** Appends `rate` events/s for `seconds` in log order; returns their ids and append times. */
async function produce(
  ns: string,
  backend: Backend,
  family: string,
  rate: number,
  seconds: number,
  appended: Map<string, number>,
): Promise<string[]> {
  const ids: string[] = []
  const started = Date.now()
  for (;;) {
    const elapsed = (Date.now() - started) / 1000
    if (elapsed >= seconds) return ids
    const due = Math.min(Math.floor(elapsed * rate) - ids.length, 50)
    if (due <= 0) {
      await sleep(Math.max(1, Math.ceil(1000 / rate)))
      continue
    }
    const events = Array.from({ length: due }, () => ping(ns, family))
    const at = Date.now()
    await backend.keyValue.transact([], () => ({ writes: { events }, result: undefined }))
    for (const event of events) {
      ids.push(event.id)
      appended.set(event.id, at)
    }
  }
}

/** The event helpers of one namespace: `ping(family)` and `produce(backend, family, rate, seconds, appended)`. */
export function eventProducer(ns: string) {
  return {
    ping: (family: string) => ping(ns, family),
    produce: (backend: Backend, family: string, rate: number, seconds: number, appended: Map<string, number>) =>
      produce(ns, backend, family, rate, seconds, appended),
  }
}
