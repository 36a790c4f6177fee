import { describe, expect, it } from 'vitest'
import {
  droppedEventCount,
  eventsToDrop,
  isOverflowNotice,
  mergeIntoDrop,
  noticeCount,
  overflowNotice,
} from '../../server/webhooks/delivery/overflow'
import { ManualClock } from '../support/manual-clock'
import type { NamespaceEvent } from '../../server/events/schemas'

const event = (id: string): NamespaceEvent => ({ id, type: 'audit.x', time: '', namespace: 'ns', data: {} })
const notice = (id: string, droppedEvents: number): NamespaceEvent => ({
  id,
  type: 'webhook.rate_limited',
  time: '',
  namespace: 'ns',
  data: { webhook: 'wh', reason: 'buffer_overflow', droppedEvents, bufferedEvents: 0 },
})

const at = (waiting: number, inFlight = 0, noticesInTransit = 0) => ({ waiting, inFlight, noticesInTransit })

describe('buffer overflow rule', () => {
  it('fits without dropping up to the cap, a notice included', () => {
    expect(eventsToDrop(at(10), 100)).toBe(0)
    expect(eventsToDrop(at(95, 5), 100)).toBe(0)
    expect(eventsToDrop(at(4999, 0, 1), 5000)).toBe(0)
  })

  it('past the cap drops the oldest and keeps a slot for the notice', () => {
    expect(eventsToDrop(at(101), 100)).toBe(2)
    expect(eventsToDrop(at(5001), 5000)).toBe(2)
  })

  it('counts the batch in flight and notices on their way, but drops only waiting events', () => {
    expect(eventsToDrop(at(4901, 100), 5000)).toBe(2)
    expect(eventsToDrop(at(4900, 100, 1), 5000)).toBe(2)
    expect(eventsToDrop(at(3, 200), 100)).toBe(3)
  })

  it('counts dropped events and carries the counts of dropped notices', () => {
    expect(droppedEventCount([event('a'), notice('n', 7), event('b')])).toEqual({ events: 2, reported: 9 })
    expect(isOverflowNotice(notice('n', 1))).toBe(true)
    const pacing: NamespaceEvent = {
      ...notice('p', 0),
      data: { webhook: 'wh', reason: 'rate_limited', droppedEvents: 0, bufferedEvents: 1200 },
    }
    expect(isOverflowNotice(pacing)).toBe(false)
    expect(droppedEventCount([pacing])).toEqual({ events: 1, reported: 1 })
  })

  it('merges a waiting notice into the next drop, and never reports more buffered than the cap', () => {
    const drop = { events: 3, reported: 3, last: '5' }
    expect(mergeIntoDrop(drop, 7)).toEqual({ events: 3, reported: 10, last: '5' })
    expect(noticeCount(notice('n', 7))).toBe(7)
    const clock = new ManualClock(Date.UTC(2026, 0, 1))
    const data = (buffered: number) => overflowNotice(clock, 'ns', 'wh', drop, buffered, 200).data
    expect(data(201)).toEqual({ webhook: 'wh', reason: 'buffer_overflow', droppedEvents: 3, bufferedEvents: 200 })
    expect(data(150).bufferedEvents).toBe(150)
  })
})
