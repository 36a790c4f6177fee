import type { PromiseActorLogic, PromiseSnapshot } from 'xstate'

/** The events XState's own promise actors send themselves; the machine's `onDone`/`onError` expect these. */
const RESOLVE = 'xstate.promise.resolve'
const REJECT = 'xstate.promise.reject'
const STOP = 'xstate.stop'

type Settled = { type: typeof RESOLVE | typeof REJECT; data: unknown }

/**
 * `fromPromise` without an `AbortController` per run (the steps get their input only). Each
 * delivery runs two promise actors (take, send), and Node's `AbortController` was a tenth of the
 * actor-start time at light load (the hand-out of one event to 100 webhooks, and the take
 * replies' steps: about 5 % of each); the delivery steps cannot be aborted anyway (a stopped
 * actor's attempt still records itself). Snapshots are `fromPromise`'s, so persisted actors
 * restore either way.
 * @example machine.provide({ actors: { takeBatch: promiseActor(({ input }) => take(input)) } })
 */
export function promiseActor<TOutput, TInput>(
  run: (args: { input: TInput }) => PromiseLike<TOutput>,
): PromiseActorLogic<TOutput, TInput> {
  return {
    config: run,
    transition: (state, event) => {
      if (state.status !== 'active') return state
      switch (event.type) {
        case RESOLVE:
          return { ...state, status: 'done', output: (event as Settled).data as TOutput, input: undefined }
        case REJECT:
          return { ...state, status: 'error', error: (event as Settled).data, input: undefined }
        case STOP:
          return { ...state, status: 'stopped', input: undefined }
        default:
          return state
      }
    },
    start: (state, { self }) => {
      if (state.status !== 'active') return
      Promise.resolve(run({ input: state.input as TInput })).then(
        (data) => {
          if (self.getSnapshot().status === 'active') self.send({ type: RESOLVE, data })
        },
        (data: unknown) => {
          if (self.getSnapshot().status === 'active') self.send({ type: REJECT, data })
        },
      )
    },
    getInitialSnapshot: (_, input): PromiseSnapshot<TOutput, TInput> => ({
      status: 'active',
      output: undefined,
      error: undefined,
      input,
    }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as PromiseSnapshot<TOutput, TInput>,
  } as PromiseActorLogic<TOutput, TInput>
}
