import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { SHARED_STORAGES, makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import { keepStoredText, storedTextOf } from '../../storage/stored-text'

/**
 * A transaction that assumes a value compares storage against the text the value was read or
 * written as (storage/stored-text.ts), not against `JSON.stringify` of it once more.
 */
const backends: Backend[] = []
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()))
})

describe('stored text', () => {
  it('is kept by identity and checked as it is when short, by a SHA-1 computed once when long', () => {
    const value = { ids: ['b', 'a'] }
    const entry = keepStoredText(value, '{"ids": ["b", "a"]}')
    expect(storedTextOf(value)).toBe(entry)
    expect(entry.check()).toEqual([1, '{"ids": ["b", "a"]}'])
    expect(storedTextOf({ ids: ['b', 'a'] }).check()).toEqual([1, '{"ids":["b","a"]}'])
    const long = { ids: Array.from({ length: 20 }, (_, i) => `whdel_${i}`) }
    const longEntry = storedTextOf(long)
    const [kind, hash] = longEntry.check()
    expect(kind).toBe(2)
    expect(hash).toBe(createHash('sha1').update(JSON.stringify(long)).digest('hex'))
    expect(longEntry.check()).toEqual([2, hash])
  })

  it('keeps no text over 16 KB: a large value held by a cache does not hold its text too', () => {
    const large = { description: 'x'.repeat(20_000) }
    const entry = keepStoredText(large, JSON.stringify(large))
    expect(storedTextOf(large)).not.toBe(entry)
    const small = { description: 'x'.repeat(10_000) }
    const kept = keepStoredText(small, JSON.stringify(small))
    expect(storedTextOf(small)).toBe(kept)
  })

  it('freezes what it keeps in the suite (STORAGE_FREEZE_KEPT), so a change throws where it is made', () => {
    expect(process.env.STORAGE_FREEZE_KEPT).toBe('1')
    const value = { items: [{ id: 'a' }] }
    keepStoredText(value, JSON.stringify(value))
    expect(() => value.items.push({ id: 'b' })).toThrow(TypeError)
    expect(() => ((value.items[0] as { id: string }).id = 'c')).toThrow(TypeError)
  })
})

describe.each(SHARED_STORAGES)('transactions on assumed values (%s)', (kind) => {
  it('commits at once on a value read from text that JSON.stringify would write otherwise', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    const key = 'stored-text:doc'
    // Written by another writer, spaced: JSON.stringify of the parsed value differs from it.
    await backend.keyValue.set(key, '{"n": 1, "tags": ["a"]}')
    const read = await backend.keyValue.transact([key], (values) => ({
      writes: {},
      result: values.get(key) as { n: number },
    }))
    expect(read).toEqual({ n: 1, tags: ['a'] })
    let runs = 0
    const written = await backend.keyValue.transact(
      [key],
      (values) => {
        runs++
        const current = values.get(key) as { n: number }
        return { writes: { set: { [key]: { ...current, n: current.n + 1 } } }, result: current.n + 1 }
      },
      { assume: new Map([[key, read]]) },
    )
    expect(written).toBe(2)
    // Before: the assumption was compared as '{"n":1,"tags":["a"]}', failed, and the body ran again on a read.
    expect(runs).toBe(1)
    expect(await backend.keyValue.get(key)).toEqual({ n: 2, tags: ['a'] })
  })

  it('runs the body again on what storage holds when the assumed value is not stored any more', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    const key = 'stored-text:moved'
    const first = { n: 1 }
    await backend.keyValue.transact([key], () => ({ writes: { set: { [key]: first } }, result: undefined }))
    await backend.keyValue.set(key, { n: 5 })
    const seen: number[] = []
    await backend.keyValue.transact(
      [key],
      (values) => {
        const current = values.get(key) as { n: number }
        seen.push(current.n)
        return { writes: { set: { [key]: { n: current.n + 1 } } }, result: undefined }
      },
      { assume: new Map([[key, first]]) },
    )
    expect(seen).toEqual([1, 5])
    expect(await backend.keyValue.get(key)).toEqual({ n: 6 })
  })
})
