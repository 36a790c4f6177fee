import { afterEach, describe, expect, it } from 'vitest'
import { emptyFirewall } from '../support/documents'
import { BACKEND_KINDS, SHARED_STORAGES, backendOfEnv, makeBackend, sharedStorageEnv } from '../support/backends'
import type { Backend } from '../../storage'
import { FirewallRepository, type StoredFirewall } from '../../storage/repositories/firewalls'
import type { Firewall } from '../../server/firewall/schema'
import { keys } from '../../storage/repositories/keys'
import { SecretBox } from '../../storage/secrets/secret-box'

/**
 * A firewall write assumes storage holds the document and index this process last read (#27: one
 * round trip instead of a read and a write); whatever changed them since, it must write on what is
 * stored, as a write that read first would.
 */
const put = (repo: FirewallRepository<Firewall>, id: string, description: string, seen: string[] = []) =>
  repo.mutate('ns', id, {}, 'now', (current) => {
    seen.push(current?.description ?? '(none)')
    return {
      next: { ...(current ?? emptyFirewall(id)), description },
      summary: `put ${description}`,
      result: (stored) => stored,
    }
  })

const remove = (repo: FirewallRepository<Firewall>, id: string) =>
  repo.mutate('ns', id, {}, 'now', () => ({ next: null, summary: 'deleted', result: () => null }))

const backends: Backend[] = []
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()))
})

describe.each(BACKEND_KINDS)('firewall writes on assumed values (%s)', (kind) => {
  it('writes on the stored document when it changed behind the one this process read', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    const repo = new FirewallRepository<Firewall>(backend, new SecretBox())
    await put(repo, 'a', 'one')
    expect((await repo.get('ns', 'a'))?.description).toBe('one')
    const stored = (await backend.keyValue.get<StoredFirewall>(keys.firewall('ns', 'a')))!
    await backend.keyValue.set(keys.firewall('ns', 'a'), { ...stored, description: 'behind', version: 2 })
    const seen: string[] = []
    const written = await put(repo, 'a', 'three', seen)
    expect(seen.at(-1)).toBe('behind')
    expect(written).toMatchObject({ version: 3, description: 'three' })
    expect((await repo.getVersion('ns', 'a', 3))?.summary).toBe('put three')
  })
})

describe.each(SHARED_STORAGES)('firewall writes on assumed values across processes (%s)', (kind) => {
  it('writes on what another process stored: a changed document, a changed index, a deleted firewall', async () => {
    const env = await sharedStorageEnv(kind, 'assumed')
    const [here, there] = await Promise.all([backendOfEnv(env), backendOfEnv(env)])
    backends.push(here, there)
    const box = new SecretBox()
    const [local, other] = [new FirewallRepository<Firewall>(here, box), new FirewallRepository<Firewall>(there, box)]
    await put(local, 'a', 'one')
    await local.list('ns')
    expect((await local.get('ns', 'a'))?.version).toBe(1)

    await put(other, 'a', 'two')
    await put(other, 'b', 'created elsewhere')
    const seen: string[] = []
    expect(await put(local, 'a', 'three', seen)).toMatchObject({ version: 3, description: 'three' })
    // Judged first on what this process had read (assumed, refused by the compare-and-set), then on what is stored.
    expect(seen).toEqual(['one', 'two'])

    // Deleted through the other process: this one creates it anew, its version after the deleted one's.
    expect((await local.get('ns', 'a'))?.version).toBe(3)
    await remove(other, 'a')
    const again: string[] = []
    expect(await put(local, 'a', 'reborn', again)).toMatchObject({ version: 4, description: 'reborn' })
    expect(again).toEqual(['three', '(none)'])
    expect(await local.firstVersion('ns', 'a')).toBe(4)
    expect((await other.list('ns')).map((fw) => [fw.id, fw.version])).toEqual([
      ['a', 4],
      ['b', 1],
    ])
  })
})
