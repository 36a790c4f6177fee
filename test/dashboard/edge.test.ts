import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, signIn, startWorld, type World } from './harness'

/** The dashboard passes the same edge as the API and the registry: request id and the token's rate limit. */

let world: World

beforeAll(async () => {
  // Small enough to reach in a few page views; the API and the dashboard share the token's budget.
  // A day-long window: the limiter's windows are aligned to the clock, and a minute boundary between two views resets the count.
  world = await startWorld({ API_RATE_LIMIT: '8/1d' })
}, 60_000)

afterAll(async () => {
  await world?.close()
})

describe('dashboard edge', () => {
  it("answers every page with its own request id and refuses past the token's API rate limit, 429 with Retry-After", async () => {
    const { context, page } = await signIn(world)
    const ids: string[] = []
    let refused: Awaited<ReturnType<typeof page.goto>> = null
    for (let i = 0; i < 12 && !refused; i++) {
      const response = await page.goto(`/namespaces/${NS}/firewalls`)
      expect(response?.headers()['x-request-id']).toMatch(/^req-/)
      ids.push(response!.headers()['x-request-id'])
      if (response?.status() === 429) refused = response
      else expect(response?.status()).toBe(200)
    }
    expect(refused, 'the dashboard reached the API rate limit').not.toBeNull()
    expect(new Set(ids).size).toBe(ids.length)
    expect(refused!.headers()['retry-after']).toMatch(/^\d+$/)
    expect(refused!.headers()['ratelimit-limit']).toBe('8')
    expect(await page.locator('main, body').first().textContent()).toContain('API rate limit of 8 requests exceeded')
    // One budget per token: the API refuses the same token now too.
    expect((await world.api('GET', `/v1/${NS}/config`)).status).toBe(429)
    await context.close()
  })
})
