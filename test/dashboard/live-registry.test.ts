import { describe, expect, it } from 'vitest'
import { forget, LIVE_EXCEPTION_REQUESTS, latest, liveCount, liveId, publish } from '../../server/app/live-registry'

describe('live registry (#30)', () => {
  it('holds at most its bound of exception-request states, the most recently published', () => {
    const extra = 500
    for (let i = 0; i < LIVE_EXCEPTION_REQUESTS + extra; i++)
      publish('exception-request', liveId.exceptionRequest('acme', 'fw', `er-${i}`), { value: 'pending' })
    expect(liveCount('exception-request')).toBe(LIVE_EXCEPTION_REQUESTS)
    expect(latest('exception-request', liveId.exceptionRequest('acme', 'fw', 'er-0'))).toBeUndefined()
    const newest = liveId.exceptionRequest('acme', 'fw', `er-${LIVE_EXCEPTION_REQUESTS + extra - 1}`)
    expect(latest('exception-request', newest)?.value).toBe('pending')
  })

  it('never drops a webhook actor state to make room (those go when their actor stops here)', () => {
    publish('webhook', liveId.webhook('acme', 'wh-live'), { value: 'idle' })
    for (let i = 0; i < LIVE_EXCEPTION_REQUESTS + 10; i++)
      publish('exception-request', liveId.exceptionRequest('acme', 'fw', `other-${i}`), { value: 'approved' })
    expect(latest('webhook', liveId.webhook('acme', 'wh-live'))?.value).toBe('idle')
    forget('webhook', liveId.webhook('acme', 'wh-live'))
    expect(latest('webhook', liveId.webhook('acme', 'wh-live'))).toBeUndefined()
  })
})
