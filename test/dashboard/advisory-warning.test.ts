import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, signIn, startWorld, type World } from './harness'

/**
 * The firewall page warns about missing advisory data when a vulnerability or malware rule decides
 * for the firewall, its own or inherited through `extends`. The server runs with the feed off and
 * no ADVISORY_DIR: no advisory data is configured.
 */

let world: World

const firewall = (id: string, rules: unknown[], extendsIds: string[] = []) => ({
  ecosystem: 'npm',
  name: `Firewall ${id}`,
  upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
  rules,
  extends: extendsIds,
})
const malwareRule = {
  id: 'no-malware',
  executionPhase: 'download',
  selector: { function: { name: 'malware' } },
  description: 'No malware',
}
const ageRule = {
  id: 'min-age',
  executionPhase: 'download',
  selector: { function: { name: 'minimumAge', duration: '72h' } },
  description: 'Wait',
}

beforeAll(async () => {
  world = await startWorld()
  for (const [id, body] of [
    ['base', firewall('base', [malwareRule])],
    ['child', firewall('child', [ageRule], ['base'])],
    ['plain', firewall('plain', [ageRule])],
  ] as const) {
    const response = await world.api('PUT', `/v1/${NS}/config/${id}`, body)
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
  }
})
afterAll(async () => world?.close())

describe('advisory data warning on the firewall page', () => {
  it('warns a firewall whose only advisory rule is inherited, and not one without any', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/child`)
    const warning = page.getByTestId('advisory-warning')
    expect(await warning.textContent()).toContain('No advisory data is configured')
    expect(await warning.textContent()).toContain('including those inherited from base')
    await page.goto(`/namespaces/${NS}/firewalls/plain`)
    await page.getByTestId('fw-version').waitFor()
    expect(await page.getByTestId('advisory-warning').count()).toBe(0)
    await context.close()
    expect(world.cspViolations).toEqual([])
  })
})
