import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { LocalBackend, type Backend } from '../../storage'
import { MemoryRateCounter, MemoryRefusalTally } from '../../storage/local/counters'
import { FirewallRepository } from '../../storage/repositories/firewalls'
import { keys } from '../../storage/repositories/keys'
import { RecentLookups } from '../../storage/repositories/recent-lookups'
import { parseSecretKey } from '../../storage/secrets/cipher'
import { SecretBox } from '../../storage/secrets/secret-box'

/**
 * The in-process structures of storage/ stay bounded however many distinct subjects or ids
 * callers bring (#30): each is filled past its bound and must stay at it.
 */
const open: Backend[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((backend) => backend.close()))
})

describe('in-memory rate counter (single-process storage)', () => {
  it('tracks at most its bound of subjects while every window is still open', async () => {
    const counter = new MemoryRateCounter(500)
    const now = Date.UTC(2026, 10, 26, 12)
    // A flood from 2,000 addresses within one minute window: none has ended, so none can be swept.
    for (let i = 0; i < 2_000; i++) await counter.hit(`auth:203.0.113.${i}`, 60, 60_000, now + i)
    expect(counter.size).toBe(500)
    // The newest subjects are the ones kept, with their counts.
    expect((await counter.hit('auth:203.0.113.1999', 60, 60_000, now + 2_000)).current.count).toBe(2)
  })
})

describe('in-memory refusal tally (single-process storage)', () => {
  it('tracks at most its bound of subjects while their windows are open', async () => {
    const tally = new MemoryRefusalTally(500)
    for (let i = 0; i < 2_000; i++) expect(await tally.note(`address:198.51.100.${i}`, 60_000)).toBe(1)
    expect(tally.size).toBe(500)
  })
})

describe('firewall repository caches', () => {
  it('keeps at most its bound of single firewalls, however many unknown ids are asked for', async () => {
    const backend = new LocalBackend(createStorage())
    open.push(backend)
    const box = new SecretBox(parseSecretKey(randomBytes(32).toString('base64'), 'SECRETS_KEY'))
    const firewalls = new FirewallRepository(backend, box, { namespaces: 10, singles: 50 })
    // A namespace with a write stamp (it has firewalls): reads under it are cached.
    await backend.keyValue.set(keys.firewallStamp('acme'), 'stamp-1')
    for (let i = 0; i < 300; i++) expect(await firewalls.get('acme', `no-such-firewall-${i}`)).toBeNull()
    expect(firewalls.cached().singles).toBe(50)
    for (let i = 0; i < 30; i++) {
      await backend.keyValue.set(keys.firewallStamp(`ns-${i}`), 'stamp-1')
      expect(await firewalls.list(`ns-${i}`)).toEqual([])
    }
    expect(firewalls.cached().namespaces).toBe(10)
    // The documents its own writes stored (what the next edit assumes) are bounded like the singles.
    for (let i = 0; i < 80; i++)
      await firewalls.mutate('acme', `written-${i}`, {}, 'now', () => ({
        next: { id: `written-${i}`, version: 0, updatedAt: '', upstreams: [] },
        summary: 'created',
        result: () => undefined,
      }))
    expect(firewalls.cached().written).toBe(50)
  })
})

describe('authentication lookups', () => {
  it('keeps at most its bound of tokens, however many live tokens are presented', () => {
    const recent = new RecentLookups<string>({ ttlMs: 1_000, max: 50 }, () => 0)
    for (let i = 0; i < 300; i++) recent.set(`hash-${i}\nacme`, 'acme', recent.generation('acme'), `lookup-${i}`)
    expect(recent.size).toBe(50)
    expect(recent.get('hash-299\nacme', 'acme')).toBe('lookup-299')
    expect(recent.get('hash-0\nacme', 'acme')).toBeUndefined()

    // The per-namespace generations are bounded too; dropping one must not revive an old entry.
    const kept = new RecentLookups<string>({ ttlMs: 1_000, max: 50 }, () => 0)
    kept.set('hash\nns-0', 'ns-0', kept.generation('ns-0'), 'before')
    kept.forget('ns-0')
    expect(kept.get('hash\nns-0', 'ns-0')).toBeUndefined()
    for (let i = 1; i <= 300; i++) kept.forget(`ns-${i}`)
    expect(kept.namespaces).toBe(50)
    expect(kept.get('hash\nns-0', 'ns-0')).toBeUndefined()
    kept.set('hash\nns-0', 'ns-0', kept.generation('ns-0'), 'after')
    expect(kept.get('hash\nns-0', 'ns-0')).toBe('after')
  })
})
