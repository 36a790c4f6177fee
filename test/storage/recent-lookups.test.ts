import { describe, expect, it } from 'vitest'
import { RecentLookups } from '../../storage/repositories/recent-lookups'

/** A read the test ends by hand, counting how many were started. */
function reads() {
  const pending: ((value: string) => void)[] = []
  return {
    started: () => pending.length,
    read: () => new Promise<string>((resolve) => pending.push(resolve)),
    finish: (index: number, value: string) => pending[index](value),
  }
}

describe('RecentLookups.through', () => {
  it('calls that ask while a read runs share it, and its value is kept', async () => {
    const recent = new RecentLookups<string>({ ttlMs: 1_000, max: 10 }, () => 0)
    const source = reads()
    const calls = [1, 2, 3].map(() => recent.through('k', 'ns', source.read, () => true))
    expect(source.started()).toBe(1)
    source.finish(0, 'one')
    expect(await Promise.all(calls)).toEqual(['one', 'one', 'one'])
    expect(await recent.through('k', 'ns', source.read, () => true)).toBe('one')
    expect(source.started()).toBe(1)
  })

  it('a call after a change in the namespace does not join a read that started before it', async () => {
    const recent = new RecentLookups<string>({ ttlMs: 1_000, max: 10 }, () => 0)
    const source = reads()
    const before = recent.through('k', 'ns', source.read, () => true)
    recent.forget('ns')
    const after = recent.through('k', 'ns', source.read, () => true)
    expect(source.started()).toBe(2)
    source.finish(0, 'old')
    source.finish(1, 'new')
    expect([await before, await after]).toEqual(['old', 'new'])
    // The read that started before the change is not kept; the later one is.
    expect(await recent.through('k', 'ns', source.read, () => true)).toBe('new')
    expect(source.started()).toBe(2)
  })

  it('a value `keep` refuses is shared with the calls in flight but not kept', async () => {
    const recent = new RecentLookups<string>({ ttlMs: 1_000, max: 10 }, () => 0)
    const source = reads()
    const calls = [
      recent.through('k', 'ns', source.read, () => false),
      recent.through('k', 'ns', source.read, () => false),
    ]
    source.finish(0, 'unknown')
    expect(await Promise.all(calls)).toEqual(['unknown', 'unknown'])
    const next = recent.through('k', 'ns', source.read, () => false)
    expect(source.started()).toBe(2)
    source.finish(1, 'again')
    expect(await next).toBe('again')
  })
})
