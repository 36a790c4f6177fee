import { describe, expect, it } from 'vitest'
import { EMPTY_OVERFLOW, planOverflow } from '../../server/webhooks/overflow'

describe('planOverflow (buffer-overflow notices)', () => {
  it('queues nothing while the buffer has room', () => {
    expect(planOverflow(EMPTY_OVERFLOW, 10, 5, 100)).toEqual({ notice: null, next: EMPTY_OVERFLOW })
  })

  it('counts the slot the notice takes as one more drop', () => {
    expect(planOverflow(EMPTY_OVERFLOW, 100, 1, 100).notice).toEqual({ droppedEvents: 2, bufferedEvents: 100 })
  })

  it('queues one notice per episode and accumulates later drops for the next one', () => {
    const first = planOverflow(EMPTY_OVERFLOW, 100, 1, 100)
    const waiting = { ...first.next, noticeId: 'evt-n1' }
    const second = planOverflow(waiting, 100, 3, 100)
    expect(second.notice).toBeNull()
    expect(second.next).toMatchObject({ noticeId: 'evt-n1', unreported: 3, behindNotice: 3 })
  })

  it('reports again once the waiting notice was delivered', () => {
    const waiting = { noticeId: 'evt-n1', noticeDropped: 2, behindNotice: 3, unreported: 4 }
    // Only the 3 events behind it are left: the notice has left the buffer from the front.
    expect(planOverflow(waiting, 3, 1, 100).notice).toEqual({ droppedEvents: 4, bufferedEvents: 5 })
  })

  it('re-reports the drops of a notice that itself fell off the front', () => {
    // Notice at the front (99 events behind it in a full buffer of 100); one more push drops it.
    const waiting = { noticeId: 'evt-n1', noticeDropped: 2, behindNotice: 99, unreported: 0 }
    expect(planOverflow(waiting, 100, 1, 100).notice).toEqual({ droppedEvents: 2 + 1 + 1, bufferedEvents: 100 })
  })
})
