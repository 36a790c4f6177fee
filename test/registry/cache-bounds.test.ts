import { afterEach, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import { RegistryCache } from '../../server/registry/cache'
import { systemClock } from '../../server/common/clock'

const backends: LocalBackend[] = []
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()))
})

function cache(options: ConstructorParameters<typeof RegistryCache>[2]) {
  const backend = new LocalBackend(createStorage())
  backends.push(backend)
  return new RegistryCache(new RegistryCacheStore(backend), systemClock, options)
}

describe('registry cache memory tier (#30)', () => {
  it('keeps at most its bound of packuments, the most recently used', async () => {
    const registry = cache({ memoryPackuments: 20 })
    for (let i = 0; i < 100; i++) await registry.setPackument('acme/fw/up', `pkg-${i}`, { found: false })
    expect(registry.memoryUse().packuments).toBe(20)
    // Storage still has every one: the memory tier only fronts it.
    expect(await registry.getPackument('acme/fw/up', 'pkg-0')).toMatchObject({ found: false })
  })

  it('keeps at most its bound of tarball bytes, and no tarball larger than the bound', async () => {
    const registry = cache({ memoryTarballBytes: 10_000 })
    for (let i = 0; i < 50; i++) await registry.setTarball(`sha512-t${i}`, Buffer.alloc(1_000, i))
    expect(registry.memoryUse().tarballBytes).toBeLessThanOrEqual(10_000)
    expect(registry.memoryUse().tarballs).toBe(10)
    await registry.setTarball('sha512-huge', Buffer.alloc(20_000))
    expect(registry.memoryUse().tarballBytes).toBeLessThanOrEqual(10_000)
    expect((await registry.getTarball('sha512-huge'))?.length).toBe(20_000)
  })
})
