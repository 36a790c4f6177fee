import { describe, expect, it } from 'vitest'
import { assign, createActor, fromPromise, setup, toPromise, waitFor } from 'xstate'
import { promiseActor } from '../../server/webhooks/delivery/promise-actor'

/** A machine invoking one promise step, as the delivery machine invokes takeBatch and deliverBatch. */
const stepMachine = setup({
  types: { context: {} as { output: unknown; error: unknown } },
  actors: { step: fromPromise<number, { n: number }>(async () => 0) },
}).createMachine({
  context: { output: null, error: null },
  initial: 'running',
  states: {
    running: {
      invoke: {
        src: 'step',
        input: { n: 21 },
        onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
})

describe('promiseActor (fromPromise without an AbortController)', () => {
  it('resolves into onDone with the input it was given, rejects into onError', async () => {
    const doubled = createActor(
      stepMachine.provide({ actors: { step: promiseActor(async ({ input }) => input.n * 2) } }),
    )
    doubled.start()
    await toPromise(doubled)
    expect(doubled.getSnapshot().value).toBe('done')
    expect(doubled.getSnapshot().context.output).toBe(42)

    const refused = new Error('refused')
    const failing = createActor(
      stepMachine.provide({ actors: { step: promiseActor<number, { n: number }>(() => Promise.reject(refused)) } }),
    )
    failing.start()
    await waitFor(failing, (snapshot) => snapshot.status === 'done')
    expect(failing.getSnapshot().value).toBe('failed')
    expect(failing.getSnapshot().context.error).toBe(refused)
  })

  it('persists a running step as fromPromise does, and a restored one runs again', async () => {
    let release: (value: number) => void = () => undefined
    const pending = new Promise<number>((resolve) => (release = resolve))
    const ours = createActor(stepMachine.provide({ actors: { step: promiseActor(() => pending) } })).start()
    const theirs = createActor(stepMachine.provide({ actors: { step: fromPromise(() => pending) } })).start()
    const persisted = ours.getPersistedSnapshot()
    expect(JSON.parse(JSON.stringify(persisted))).toEqual(JSON.parse(JSON.stringify(theirs.getPersistedSnapshot())))
    ours.stop()
    theirs.stop()
    release(1)

    // Restored from what fromPromise stored (a snapshot of before this change), the step starts again.
    const restored = createActor(
      stepMachine.provide({ actors: { step: promiseActor(async ({ input }) => input.n + 1) } }),
      { snapshot: persisted },
    ).start()
    await toPromise(restored)
    expect(restored.getSnapshot().context.output).toBe(22)
  })

  it('a stopped step stays stopped: a late resolve or reject changes nothing, and its input is let go', () => {
    const logic = promiseActor<number, { n: number }>(async ({ input }) => input.n)
    const running = logic.getInitialSnapshot({} as never, { n: 1 })
    const scope = {} as never
    const stopped = logic.transition(running, { type: 'xstate.stop' }, scope)
    expect(stopped).toMatchObject({ status: 'stopped', input: undefined })
    expect(logic.transition(stopped, { type: 'xstate.promise.resolve', data: 5 }, scope)).toBe(stopped)
    expect(logic.transition(stopped, { type: 'xstate.promise.reject', data: new Error('late') }, scope)).toBe(stopped)
    // Settled once, a second outcome is ignored too.
    const done = logic.transition(running, { type: 'xstate.promise.resolve', data: 5 }, scope)
    expect(done).toMatchObject({ status: 'done', output: 5, input: undefined })
    expect(logic.transition(done, { type: 'xstate.promise.reject', data: new Error('late') }, scope)).toBe(done)
  })
})
