import { describe, expect, it } from 'vitest'
import { LIVE_EXCEPTION_REQUESTS, LiveRegistry, liveId } from '../../server/observability/live-registry'

describe('live registry (#30)', () => {
  it('holds at most its bound of exception-request states, the most recently published', () => {
    const live = new LiveRegistry()
    const extra = 500
    for (let i = 0; i < LIVE_EXCEPTION_REQUESTS + extra; i++)
      live.publish('exception-request', liveId.exceptionRequest('acme', 'fw', `er-${i}`), { value: 'pending' })
    expect(live.count('exception-request')).toBe(LIVE_EXCEPTION_REQUESTS)
    expect(live.latest('exception-request', liveId.exceptionRequest('acme', 'fw', 'er-0'))).toBeUndefined()
    const newest = liveId.exceptionRequest('acme', 'fw', `er-${LIVE_EXCEPTION_REQUESTS + extra - 1}`)
    expect(live.latest('exception-request', newest)?.value).toBe('pending')
  })

  it('never drops a webhook actor state to make room (those go when their actor stops here)', () => {
    const live = new LiveRegistry()
    live.publish('webhook', liveId.webhook('acme', 'wh-live'), { value: 'idle' })
    for (let i = 0; i < LIVE_EXCEPTION_REQUESTS + 10; i++)
      live.publish('exception-request', liveId.exceptionRequest('acme', 'fw', `other-${i}`), { value: 'approved' })
    expect(live.latest('webhook', liveId.webhook('acme', 'wh-live'))?.value).toBe('idle')
    live.forget('webhook', liveId.webhook('acme', 'wh-live'))
    expect(live.latest('webhook', liveId.webhook('acme', 'wh-live'))).toBeUndefined()
  })

  it('keeps each registry to itself: a state published in one is not in another', () => {
    const one = new LiveRegistry()
    const other = new LiveRegistry()
    one.publish('webhook', liveId.webhook('acme', 'wh-1'), { value: 'active' })
    expect(one.latest('webhook', liveId.webhook('acme', 'wh-1'))?.value).toBe('active')
    expect(other.latest('webhook', liveId.webhook('acme', 'wh-1'))).toBeUndefined()
  })
})
