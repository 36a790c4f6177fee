import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PackedIndexBuilder, type PackedAdvisoryIndex } from '../../server/advisories/packed-index'
import type { Advisory } from '../../server/advisories/types'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { startProxy, type ProxyHarness } from './harness'
import { publishFixtures } from './npm-cli'

/**
 * A packument is rendered once per everything it depends on. Advisory data is among those only
 * where a `versions` rule reads it: a feed refresh (a new index) hides a newly malicious version
 * there at once, and changes nothing elsewhere.
 */

const malware = (version: string): Advisory =>
  ({
    id: `MAL-2026-${version}`,
    malware: true,
    affected: [{ ecosystem: 'npm', name: 'fw-aged', versions: [version], ranges: [] }],
  }) as unknown as Advisory

const indexOf = (advisories: Advisory[]): PackedAdvisoryIndex => {
  const builder = new PackedIndexBuilder()
  for (const advisory of advisories) builder.add(advisory)
  return builder.finish()
}

let registry: Verdaccio
let proxy: ProxyHarness
let current = indexOf([])
let token: string

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [
    { name: 'fw-aged', version: '1.0.0', license: 'MIT' },
    { name: 'fw-aged', version: '2.0.0', license: 'MIT' },
  ])
  proxy = await startProxy({ advisories: () => current })
  token = await proxy.token('owner')
  const upstreams = [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token }, cached: true }]
  const malwareRule = (executionPhase: string) => ({
    id: 'malware',
    executionPhase,
    selector: { function: { name: 'malware' } },
    description: 'known malicious versions',
  })
  await proxy.putFirewall('hiding', { upstreams, rules: [malwareRule('versions')] })
  await proxy.putFirewall('blocking', { upstreams, rules: [malwareRule('download')] })
}, 60_000)
afterAll(async () => {
  await proxy?.close()
  await registry?.stop()
})

async function versions(fw: string): Promise<string[]> {
  const response = await fetch(`${proxy.registryUrl(fw)}fw-aged`, { headers: { authorization: `Bearer ${token}` } })
  expect(response.status).toBe(200)
  return Object.keys(((await response.json()) as { versions: Record<string, unknown> }).versions)
}

describe('a packument after a feed refresh', () => {
  it('hides a version a new malware record names where a versions rule reads it, and only there', async () => {
    expect(await versions('hiding')).toEqual(['1.0.0', '2.0.0'])
    expect(await versions('blocking')).toEqual(['1.0.0', '2.0.0'])
    current = indexOf([malware('2.0.0')])
    expect(await versions('hiding')).toEqual(['1.0.0'])
    expect(await versions('blocking')).toEqual(['1.0.0', '2.0.0'])
    current = indexOf([])
    expect(await versions('hiding')).toEqual(['1.0.0', '2.0.0'])
  })
})
