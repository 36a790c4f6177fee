import { describe, expect, it } from 'vitest'
import { DANGLING_AFTER_MS, DanglingRefs } from '../../server/webhooks/delivery/dangling-refs'

/** The watch alone, on a clock the test sets (the host's passes are in dangling-reference.test.ts). */
function watch() {
  let now = 0
  const dropped: string[] = []
  const refs = new DanglingRefs(
    () => now,
    async (ref) => void dropped.push(ref),
  )
  return { refs, dropped, at: (ms: number) => (now = ms) }
}

describe('DanglingRefs', () => {
  it('drops a reference seen missing, pass after pass, for the whole interval, and not before', async () => {
    const { refs, dropped, at } = watch()
    for (let t = 0; t < DANGLING_AFTER_MS; t += 60_000) {
      at(t)
      refs.listed(['acme/wh-gone'])
      expect(refs.missing('acme/wh-gone')).toBeNull()
    }
    at(DANGLING_AFTER_MS)
    refs.listed(['acme/wh-gone'])
    await refs.missing('acme/wh-gone')
    expect(dropped).toEqual(['acme/wh-gone'])
  })

  it('starts afresh for a reference seen missing once (a creation in flight) and again much later (its delete)', async () => {
    const { refs, dropped, at } = watch()
    expect(refs.missing('acme/wh-1')).toBeNull()
    // Created and adopted by another process: this one never finds its document.
    at(DANGLING_AFTER_MS + 1)
    expect(refs.missing('acme/wh-1')).toBeNull()
    at(DANGLING_AFTER_MS + 2)
    expect(refs.missing('acme/wh-1')).toBeNull()
    expect(dropped).toEqual([])
  })

  it('forgets a reference found with its document, or no longer listed', () => {
    const { refs, dropped, at } = watch()
    expect(refs.missing('acme/wh-a')).toBeNull()
    expect(refs.missing('acme/wh-b')).toBeNull()
    refs.found('acme/wh-a')
    refs.listed(['acme/wh-a'])
    at(DANGLING_AFTER_MS - 1)
    expect(refs.missing('acme/wh-a')).toBeNull()
    expect(refs.missing('acme/wh-b')).toBeNull()
    at(DANGLING_AFTER_MS + 10)
    expect(refs.missing('acme/wh-a')).toBeNull()
    expect(refs.missing('acme/wh-b')).toBeNull()
    expect(dropped).toEqual([])
  })
})
