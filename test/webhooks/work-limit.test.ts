import { describe, expect, it } from 'vitest'
import { WorkLimit } from '../../server/webhooks/delivery/work-limit'

/** A piece of work that finishes when the test says so. */
function gate() {
  let open!: () => void
  let fail!: (error: Error) => void
  const done = new Promise<void>((resolve, reject) => {
    open = resolve
    fail = reject
  })
  return { done, open, fail }
}

describe('WorkLimit', () => {
  it('runs at most `limit` at once and starts the waiting ones first come first served', async () => {
    const limit = new WorkLimit(2)
    const gates = [gate(), gate(), gate(), gate()]
    const started: number[] = []
    const runs = gates.map((g, index) =>
      limit.run(async () => {
        started.push(index)
        await g.done
        return index
      }),
    )
    await Promise.resolve()
    expect(started).toEqual([0, 1])
    expect(limit.active).toBe(2)
    gates[1].open()
    await runs[1]
    expect(started).toEqual([0, 1, 2])
    gates[0].fail(new Error('boom'))
    await expect(runs[0]).rejects.toThrow('boom')
    // A failed piece hands its slot on like a finished one.
    expect(started).toEqual([0, 1, 2, 3])
    expect(limit.active).toBe(2)
    gates[2].open()
    gates[3].open()
    expect(await Promise.all(runs.slice(2))).toEqual([2, 3])
    expect(limit.active).toBe(0)
  })
})
