import { describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { createServices } from '../../server/app/services'
import { auditRefusal, PENDING_REFUSAL_FLUSHES, pendingRefusalFlushes } from '../../server/http/refusal-audit'
import type { Principal } from '../../server/auth/principal'

describe('refusal audit flush timers (#30)', () => {
  it('sets at most its bound of flush timers, however many subjects are refused in one window', async () => {
    const services = createServices(new LocalBackend(createStorage()))
    const meta = { requestId: 'req-1', method: 'GET', path: '/v1/acme/webhooks', remoteAddress: '203.0.113.9' }
    const principal = (i: number): Principal => ({
      type: 'service',
      id: `svc-${i}`,
      namespace: 'acme',
      tokenId: `tok-${i}`,
      tokenIdentifier: `tid-${i}`,
      teams: [],
      grants: [],
      owner: false,
    })
    // Refused tokens, each its own subject, more of them than the bound within one 60 s window.
    for (let i = 0; i < PENDING_REFUSAL_FLUSHES + 200; i++)
      await auditRefusal(services, { ns: 'acme', scope: 'api', principal: principal(i), meta, statusCode: 429 })
    expect(pendingRefusalFlushes()).toBe(PENDING_REFUSAL_FLUSHES)
    await services.storage.close()
  }, 120_000)
})
