import { describe, expect, it } from 'vitest'
import { RequestsInFlight } from '../../server/observability/requests-in-flight'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { createServices } from '../../server/app/services'
import { runWithRequestContext, type RequestContext } from '../../server/app/request-context'
import { authenticateCaller } from '../../server/http/edge'

describe('requests in flight', () => {
  it('counts each request once, however often it ends, and says when none is left', () => {
    const requests = new RequestsInFlight()
    const drained: number[] = []
    const off = requests.onDrained(() => drained.push(requests.count()))
    const before = requests.count()
    const first = requests.started()
    const second = requests.started()
    expect(requests.count()).toBe(before + 2)
    first()
    first()
    expect(requests.count()).toBe(before + 1)
    expect(drained).toEqual([])
    second()
    expect(requests.count()).toBe(before)
    expect(drained).toEqual(before === 0 ? [0] : [])
    off()
  })

  it('stops counting a request its handler declares handled while the response goes on', () => {
    const requests = new RequestsInFlight()
    const before = requests.count()
    const response = {}
    const done = requests.started(response)
    expect(requests.count()).toBe(before + 1)
    requests.handled(response)
    expect(requests.count()).toBe(before)
    done()
    requests.handled({})
    expect(requests.count()).toBe(before)
  })
})

describe('a caller without a valid token', () => {
  it('stops counting as soon as it is refused, so delivery does not give way to a flood of them', async () => {
    const services = createServices(new LocalBackend(createStorage()))
    const requests = services.requests
    const meta = { requestId: 'req-1', method: 'GET', path: '/v1/acme/webhooks', remoteAddress: '203.0.113.9' }
    const before = requests.count()
    const context: RequestContext = { requestId: 'req-1' }
    context.stopCounting = requests.started()
    const refused = await runWithRequestContext(context, async () => {
      expect(requests.count()).toBe(before + 1)
      return authenticateCaller(services, 'fwp_notAValidToken', 'acme', meta).catch((error: unknown) => error)
    })
    expect(refused).toMatchObject({ kind: 'unauthenticated' })
    expect(requests.count()).toBe(before)
    await services.storage.close()
  })
})

describe('request tracking bounds (#30)', () => {
  it('holds nothing per request once requests end, and nothing per listener once unsubscribed', () => {
    const requests = new RequestsInFlight()
    const listeners = requests.drainListeners()
    const before = requests.count()
    for (let i = 0; i < 10_000; i++) {
      const off = requests.onDrained(() => undefined)
      const response = {}
      const done = requests.started(response)
      requests.handled(response)
      done()
      off()
    }
    expect(requests.count()).toBe(before)
    expect(requests.drainListeners()).toBe(listeners)
  })
})
