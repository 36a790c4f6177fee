import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type RunningServer } from '../support/server'
import { redisUrl, uniquePrefix } from '../support/redis'
import { createUser } from '../support/admin'
import { parseExposition, sum } from './prom-text'

const TOKEN = 'fwp_rateLimitTestBootstrapToken0123456789abc'
// A day-long window: no call of the window before ages out while the test runs, so counts are exact.
const LIMIT = 8

describe('API rate limit shared across processes on one Redis', () => {
  const servers: RunningServer[] = []

  beforeAll(async () => {
    const env = {
      REDIS_URL: await redisUrl(),
      REDIS_PREFIX: uniquePrefix('rate'),
      BOOTSTRAP_TOKEN: TOKEN,
      API_RATE_LIMIT: `${LIMIT}/1d`,
    }
    // One after the other: the first bootstraps the namespace, the second finds it.
    servers.push(await startServer(env))
    servers.push(await startServer(env))
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
  })

  it('counts one token across both processes, then answers 429 problems with Retry-After', async () => {
    const [a, b] = servers.map((server) => apiClient(server.url, TOKEN))
    const answers = []
    for (let i = 0; i < LIMIT + 2; i++) answers.push(await (i % 2 === 0 ? a : b)('GET', '/v1/default/config'))
    expect(answers.map((r) => r.status)).toEqual([...Array(LIMIT).fill(200), 429, 429])
    expect(answers.slice(0, LIMIT).map((r) => Number(r.headers.get('ratelimit-remaining')))).toEqual(
      Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i),
    )
    const refused = answers[LIMIT]
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.body).toMatchObject({ status: 429, code: 'rate_limited' })
    expect(refused.headers.get('ratelimit-limit')).toBe(String(LIMIT))
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    const reset = Number(refused.headers.get('ratelimit-reset'))
    expect(reset).toBeGreaterThan(0)
    expect(reset).toBeLessThanOrEqual(86_400)
    expect(refused.headers.get('retry-after')).toBe(String(reset))
  })

  it('limits per token: another token of the namespace still gets through', async () => {
    const other = await createUser(servers[0], 'second-user')
    const answer = await apiClient(servers[1].url, other)('GET', '/v1/default/me')
    expect(answer.status).toBe(200)
    expect(answer.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1))
    expect((await apiClient(servers[1].url, TOKEN)('GET', '/v1/default/me')).status).toBe(429)
  })

  it('counts refusals in the metrics of the process that refused', async () => {
    const text = await (await fetch(`${servers[1].url}/metrics`)).text()
    expect(sum(parseExposition(text), 'rate_limited_requests_total', { scope: 'api' })).toBeGreaterThanOrEqual(1)
  })
})
