import { describe, expect, it } from 'vitest'
import {
  onRequestsDrained,
  requestHandled,
  requestStarted,
  requestsInFlight,
} from '../../server/app/requests-in-flight'

describe('requests in flight', () => {
  it('counts each request once, however often it ends, and says when none is left', () => {
    const drained: number[] = []
    const off = onRequestsDrained(() => drained.push(requestsInFlight()))
    const before = requestsInFlight()
    const first = requestStarted()
    const second = requestStarted()
    expect(requestsInFlight()).toBe(before + 2)
    first()
    first()
    expect(requestsInFlight()).toBe(before + 1)
    expect(drained).toEqual([])
    second()
    expect(requestsInFlight()).toBe(before)
    expect(drained).toEqual(before === 0 ? [0] : [])
    off()
  })

  it('stops counting a request its handler declares handled while the response goes on', () => {
    const before = requestsInFlight()
    const response = {}
    const done = requestStarted(response)
    expect(requestsInFlight()).toBe(before + 1)
    requestHandled(response)
    expect(requestsInFlight()).toBe(before)
    done()
    requestHandled({})
    expect(requestsInFlight()).toBe(before)
  })
})
