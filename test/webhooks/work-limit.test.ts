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

/** Runs one piece per gate in `lane`, each noting its index when it starts and ending when its gate opens. */
function runGated(limit: WorkLimit, gates: ReturnType<typeof gate>[], lane: 'take' | 'send' | 'record') {
  const started: number[] = []
  const runs = gates.map((g, index) =>
    limit.run(async () => {
      started.push(index)
      await g.done
    }, lane),
  )
  return { started, runs }
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
      }, 'take'),
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

  it('starts waiting work by lane, send before take before record, first come first served within one', async () => {
    const limit = new WorkLimit(1)
    const first = gate()
    const started: string[] = []
    const runs = [limit.run(() => first.done, 'record')]
    for (const [name, lane] of [
      ['record-1', 'record'],
      ['take-1', 'take'],
      ['send-1', 'send'],
      ['take-2', 'take'],
      ['send-2', 'send'],
    ] as const)
      runs.push(
        limit.run(async () => {
          started.push(name)
        }, lane),
      )
    await Promise.resolve()
    expect(started).toEqual([])
    first.open()
    await Promise.all(runs)
    expect(started).toEqual(['send-1', 'send-2', 'take-1', 'take-2', 'record-1'])
    expect(limit.active).toBe(0)
  })

  it('starts a record only once no send or take runs or waits', async () => {
    const limit = new WorkLimit(4)
    const take = gate()
    const started: string[] = []
    const taking = limit.run(async () => {
      started.push('take')
      await take.done
    }, 'take')
    const recording = limit.run(async () => {
      started.push('record')
    }, 'record')
    await Promise.resolve()
    // Free slots, but a take runs: the record's CPU would delay that burst's last sends.
    expect(started).toEqual(['take'])
    const send = gate()
    take.open()
    await taking
    const sending = limit.run(async () => {
      started.push('send')
      await send.done
    }, 'send')
    await recording
    expect(started).toEqual(['take', 'record', 'send'])
    send.open()
    await sending
    expect(limit.active).toBe(0)
  })

  it('runs at most `recordLimit` records at once', async () => {
    const limit = new WorkLimit(4, undefined, 2)
    const gates = [gate(), gate(), gate()]
    const { started, runs } = runGated(limit, gates, 'record')
    await Promise.resolve()
    expect(started).toEqual([0, 1])
    gates[0].open()
    await runs[0]
    expect(started).toEqual([0, 1, 2])
    gates[1].open()
    gates[2].open()
    await Promise.all(runs)
    expect(limit.active).toBe(0)
  })

  it('starts fewer pieces while the work it gives way to is busy, and the held-back ones once it is idle', async () => {
    let busy = false
    let idle = () => undefined as void
    const limit = new WorkLimit(3, {
      busy: () => busy,
      limit: 1,
      onIdle: (listener) => {
        idle = listener
        return () => undefined
      },
    })
    const gates = [gate(), gate(), gate(), gate()]
    busy = true
    const { started, runs } = runGated(limit, gates, 'take')
    await Promise.resolve()
    expect(started).toEqual([0])
    gates[0].open()
    await runs[0]
    // Still busy: the finished piece hands its slot to one waiting piece only.
    expect(started).toEqual([0, 1])
    expect(limit.active).toBe(1)
    busy = false
    idle()
    await Promise.resolve()
    expect(started).toEqual([0, 1, 2, 3])
    expect(limit.active).toBe(3)
    for (const g of gates.slice(1)) g.open()
    await Promise.all(runs)
    expect(limit.active).toBe(0)
  })

  it('urgentDone waits while a take or send runs or waits, and not for records', async () => {
    const limit = new WorkLimit(1)
    let done = false
    const mark = () => (done = true)
    await limit.urgentDone()
    const record = gate()
    const recording = limit.run(() => record.done, 'record')
    // A record alone is not urgent work.
    await limit.urgentDone()
    const [take, send] = [gate(), gate()]
    const taking = limit.run(() => take.done, 'take')
    const sending = limit.run(() => send.done, 'send')
    void limit.urgentDone().then(mark)
    record.open()
    await recording
    // The send runs now (its lane first) and the take waits for the slot.
    send.open()
    await sending
    await Promise.resolve()
    expect(done).toBe(false)
    take.open()
    await taking
    await Promise.resolve()
    expect(done).toBe(true)
  })
})
