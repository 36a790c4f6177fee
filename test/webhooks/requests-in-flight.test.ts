import { describe, expect, it } from 'vitest'
import {
  drainListeners,
  onRequestsDrained,
  requestHandled,
  requestStarted,
  requestsInFlight,
} from '../../server/app/requests-in-flight'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { createServices } from '../../server/app/services'
import { runWithRequestContext, type RequestContext } from '../../server/app/request-context'
import { authenticateCaller } from '../../server/http/edge'

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

describe('a caller without a valid token', () => {
  it('stops counting as soon as it is refused, so delivery does not give way to a flood of them', async () => {
    const services = createServices(new LocalBackend(createStorage()))
    const meta = { requestId: 'req-1', method: 'GET', path: '/v1/acme/webhooks', remoteAddress: '203.0.113.9' }
    const before = requestsInFlight()
    const context: RequestContext = { requestId: 'req-1' }
    context.stopCounting = requestStarted()
    const refused = await runWithRequestContext(context, async () => {
      expect(requestsInFlight()).toBe(before + 1)
      return authenticateCaller(services, 'fwp_notAValidToken', 'acme', meta).catch((error: unknown) => error)
    })
    expect(refused).toMatchObject({ kind: 'unauthenticated' })
    expect(requestsInFlight()).toBe(before)
    await services.storage.close()
  })
})

describe('request tracking bounds (#30)', () => {
  it('holds nothing per request once requests end, and nothing per listener once unsubscribed', () => {
    const listeners = drainListeners()
    const before = requestsInFlight()
    for (let i = 0; i < 10_000; i++) {
      const off = onRequestsDrained(() => undefined)
      const response = {}
      const done = requestStarted(response)
      requestHandled(response)
      done()
      off()
    }
    expect(requestsInFlight()).toBe(before)
    expect(drainListeners()).toBe(listeners)
  })
})
