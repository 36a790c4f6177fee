import { afterEach, describe, expect, it } from 'vitest'
import type { NamespaceEvent } from '../../server/events/schemas'
import { makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import { EventLogRepository } from '../../storage/repositories/event-log'
import { LogFollower, type EventEntry } from '../../server/webhooks/delivery/log-follower'
import { makeEvent } from '../../server/events/factory'
import { systemClock } from '../../server/common/clock'
import { waitFor } from '../support/wait-for'

let backend: Backend
let follower: LogFollower
afterEach(async () => {
  await follower?.stop()
  await backend?.close()
})

const ping = () =>
  makeEvent(systemClock, 'ns1', 'audit.test.ping', { action: 'test.ping', outcome: 'success' as const })

/** Keeps the thread busy for `ms`, as a listener with much to check would. */
function busy(ms: number) {
  const until = performance.now() + ms
  while (performance.now() < until);
}

/**
 * Appends `count` entries to six slow listeners (1.5 ms each) and reports what each saw and how
 * many timer ticks had passed at each call: a tick only fires between listeners when the
 * hand-out lets the event loop through.
 */
async function handOutToSlowListeners(count: number) {
  backend = await makeBackend('fs')
  const events = new EventLogRepository<NamespaceEvent>(backend)
  follower = new LogFollower(events)
  await follower.ready()
  const seen = Array.from({ length: 6 }, () => [] as string[])
  let ticks = 0
  const ticksAtCall: number[] = []
  for (const list of seen)
    await follower.follow('ns1', (entries: EventEntry[]) => {
      ticksAtCall.push(ticks)
      busy(1.5)
      list.push(...entries.map((entry) => entry.value.id))
    })
  const timer = setInterval(() => ticks++, 0)
  const appended = Array.from({ length: count }, ping)
  await events.append(appended)
  await waitFor(() => seen.every((list) => list.length === count), 5_000)
  await follower.idle()
  clearInterval(timer)
  return { seen, ticksAtCall, ids: appended.map((event) => event.id) }
}

describe('log follower', () => {
  it('hands a backlog page to every listener in log order, letting other work run between slow listeners', async () => {
    // More than one entry: a page this long is sliced.
    const { seen, ticksAtCall, ids } = await handOutToSlowListeners(12)
    for (const list of seen) expect(list).toEqual(ids)
    expect(ticksAtCall.at(-1)).toBeGreaterThan(ticksAtCall[0])
  })

  it('hands an entry appended alone to every listener in one go, however slow they are', async () => {
    const { seen, ticksAtCall, ids } = await handOutToSlowListeners(1)
    for (const list of seen) expect(list).toEqual(ids)
    // Sliced, the first webhooks' takes and sends ran before the last ones heard of the event.
    expect(new Set(ticksAtCall).size).toBe(1)
  })

  it('reads a log appended to one entry at a time at most every 5 ms, handing out every entry in order', async () => {
    backend = await makeBackend('fs')
    const readAt: number[] = []
    // The real repository, noting when each read starts.
    const events = new (class extends EventLogRepository<NamespaceEvent> {
      override read<T = NamespaceEvent>(ns: string, after: string | null, limit: number) {
        readAt.push(performance.now())
        return super.read<T>(ns, after, limit)
      }
    })(backend)
    follower = new LogFollower(events)
    await follower.ready()
    const seen: string[] = []
    await follower.follow('ns1', (entries) => seen.push(...entries.map((entry) => entry.value.id)))
    // Appends one event each, as API calls do: every append notifies the follower.
    const appended: string[] = []
    for (let i = 0; i < 30; i++) {
      const event = ping()
      appended.push(event.id)
      await events.append([event])
    }
    await waitFor(() => seen.length === appended.length, 5_000)
    await follower.idle()
    expect(seen).toEqual(appended)
    // Reads start at least 5 ms apart, less the timers' slack (their clock counts whole ms); one
    // page each here (30 < 2,000). Read on every append, they came 1-2 ms apart.
    expect(readAt.length).toBeGreaterThan(1)
    for (let i = 1; i < readAt.length; i++) expect(readAt[i] - readAt[i - 1]).toBeGreaterThanOrEqual(3.5)
  })

  it('gives nothing more to a listener removed while a page is being handed out', async () => {
    backend = await makeBackend('fs')
    const events = new EventLogRepository<NamespaceEvent>(backend)
    follower = new LogFollower(events)
    await follower.ready()
    const late: string[] = []
    const lateListener = (entries: EventEntry[]) => late.push(...entries.map((entry) => entry.value.id))
    const first: string[] = []
    await follower.follow('ns1', (entries) => {
      busy(3)
      first.push(...entries.map((entry) => entry.value.id))
      // Removed after the slice this listener filled: the hand-out yields before reaching it.
      follower.unfollow('ns1', lateListener)
    })
    await follower.follow('ns1', lateListener)
    await events.append(Array.from({ length: 12 }, ping))
    await waitFor(() => first.length === 12, 5_000)
    await follower.idle()
    expect(late).toEqual([])
  })

  it('wakes a listener whose follow began while the last listener of the log left', async () => {
    backend = await makeBackend('fs')
    const events = new EventLogRepository<NamespaceEvent>(backend)
    follower = new LogFollower(events)
    await follower.ready()
    const leaving = () => undefined
    await follower.follow('ns1', leaving)
    const seen: string[] = []
    // As when a webhook is adopted while the process's only other actor of the namespace retires.
    const following = follower.follow('ns1', (entries) => seen.push(...entries.map((entry) => entry.value.id)))
    follower.unfollow('ns1', leaving)
    await following
    const appended = [ping(), ping()]
    await events.append(appended)
    await waitFor(() => seen.length === 2, 5_000, 'entries appended after the follow')
    expect(seen).toEqual(appended.map((event) => event.id))
  })

  it('reads the log end again for the next follow after a storage failure', async () => {
    backend = await makeBackend('fs')
    let failures = 1
    // The real repository, whose first read of the log's end fails as a storage outage would.
    const events = new (class extends EventLogRepository<NamespaceEvent> {
      override lastCursor(ns: string) {
        if (failures-- > 0) return Promise.reject(new Error('storage unavailable'))
        return super.lastCursor(ns)
      }
    })(backend)
    follower = new LogFollower(events)
    await follower.ready()
    const listener = (entries: EventEntry[]) => seen.push(...entries.map((entry) => entry.value.id))
    const seen: string[] = []
    await expect(follower.follow('ns1', listener)).rejects.toThrow('storage unavailable')
    await follower.follow('ns1', listener)
    const appended = [ping()]
    await events.append(appended)
    await waitFor(() => seen.length === 1, 5_000, 'the entry appended after the second follow')
    expect(seen).toEqual([appended[0].id])
  })
})
