import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'

/**
 * Finding 6: anonymous calls must not flood webhook receivers through audit events. Calls without a
 * valid token are limited per client address; refusals past the limit are audited in aggregate.
 */
// A day-long window: no call of the window before ages out while the test runs, so the counts
// (and RateLimit-Remaining) are exact (test/security/sliding-window.test.ts covers the boundaries).
const LIMIT = 10

describe('calls without a valid token', () => {
  let server: RunningServer
  let owner: Api
  beforeAll(async () => {
    server = await startServer({ AUTH_FAILURE_RATE_LIMIT: `${LIMIT}/1d` })
    owner = apiClient(server.url, bootstrapToken(server))
  }, 60_000)
  afterAll(async () => {
    await server.stop()
  })

  const bad = (i: number, path = '/v1/default/config') =>
    fetch(server.url + path, {
      // A client that invents X-Forwarded-For does not get a fresh address (TRUST_PROXY is not set).
      headers: { authorization: `Bearer fwp_${'x'.repeat(32)}${i}`, 'x-forwarded-for': `198.51.100.${i % 250}` },
    })

  it('answers 401 up to the limit, then 429 with Retry-After and RateLimit-*; a valid token from that address is unaffected', async () => {
    const statuses: number[] = []
    let refused: Response | undefined
    for (let i = 0; i < 3 * LIMIT; i++) {
      const res = await bad(i)
      statuses.push(res.status)
      if (res.status === 429) refused ??= res
      await res.arrayBuffer()
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401))
    expect(statuses.slice(LIMIT)).toEqual(Array(2 * LIMIT).fill(429))
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused!.headers.get('ratelimit-limit')).toBe(String(LIMIT))
    expect(refused!.headers.get('ratelimit-remaining')).toBe('0')
    expect(refused!.headers.get('content-type')).toContain('application/problem+json')

    const registry = await bad(0, '/registry/default/any/left-pad')
    expect(registry.status).toBe(429)

    expect((await owner('GET', '/v1/default/config')).status).toBe(200)
    expect((await owner('GET', '/v1/default/me')).status).toBe(200)
  })

  it('audits the refusals past the limit in aggregate: one entry standing for them, not one per call', async () => {
    const audit = await owner('GET', '/v1/default/audit?limit=1000')
    expect(audit.status).toBe(200)
    const failures = audit.body.filter(
      (entry: { outcome: string; actorUserId?: string }) => entry.outcome === 'failure' && !entry.actorUserId,
    )
    const individual = failures.filter((entry: { statusCode: number }) => entry.statusCode === 401)
    const aggregated = failures.filter((entry: { action: string }) => entry.action === 'request.refused')
    expect(individual).toHaveLength(LIMIT)
    // The first refusal of the window is written at once; the rest are counted into the next entry.
    expect(aggregated).toHaveLength(1)
    expect(aggregated[0]).toMatchObject({ statusCode: 429, eventData: { suppressed: 1, limit: 'auth' } })
    expect(failures.length).toBeLessThanOrEqual(LIMIT + 1)
  })
})
