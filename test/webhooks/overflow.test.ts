import { describe, expect, it } from 'vitest'
import { droppedEventCount, incomingToDrop, isOverflowNotice, planPush } from '../../server/webhooks/delivery/overflow'
import type { NamespaceEvent } from '../../server/events/schemas'

const event = (id: string): NamespaceEvent => ({ id, type: 'audit.x', time: '', namespace: 'ns', data: {} })
const notice = (id: string, droppedEvents: number): NamespaceEvent => ({
  id, type: 'webhook.rate_limited', time: '', namespace: 'ns', data: { webhook: 'wh', reason: 'buffer_overflow', droppedEvents, bufferedEvents: 0 },
})

describe('buffer overflow plan', () => {
  it('fits without dropping', () => {
    expect(planPush(10, 5, 100)).toEqual({ popFront: 0, overflows: false })
    expect(planPush(95, 5, 100)).toEqual({ popFront: 0, overflows: false })
  })

  it('drops the oldest and keeps a slot for the notice', () => {
    expect(planPush(100, 1, 100)).toEqual({ popFront: 2, overflows: true })
    expect(planPush(5000, 1, 5000)).toEqual({ popFront: 2, overflows: true })
  })

  it('drops the oldest incoming events when the buffer alone cannot make room', () => {
    expect(planPush(3, 200, 100)).toEqual({ popFront: 3, overflows: true })
    expect(incomingToDrop(0, 200, 100)).toBe(101)
    expect(incomingToDrop(50, 10, 100)).toBe(0)
  })

  it('counts dropped events and carries the counts of dropped notices', () => {
    expect(droppedEventCount([event('a'), notice('n', 7), event('b')])).toEqual({ events: 2, reported: 9 })
    expect(isOverflowNotice(notice('n', 1))).toBe(true)
    const pacing: NamespaceEvent = { ...notice('p', 0), data: { webhook: 'wh', reason: 'rate_limited', droppedEvents: 0, bufferedEvents: 1200 } }
    expect(isOverflowNotice(pacing)).toBe(false)
    expect(droppedEventCount([pacing])).toEqual({ events: 1, reported: 1 })
  })
})
