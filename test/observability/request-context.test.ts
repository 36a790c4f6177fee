import { executionAsyncId } from 'node:async_hooks'
import { describe, expect, it } from 'vitest'
import {
  currentRequestId,
  endRequestContext,
  runWithRequestContext,
  type RequestContext,
} from '../../server/app/request-context'

/**
 * Whether promise hooks run now: with them, each promise's reaction runs under an async id of its
 * own; without them, under the id of what started it (the same for both).
 */
async function promiseHooksOn(): Promise<boolean> {
  const first = await Promise.resolve().then(() => executionAsyncId())
  const second = await Promise.resolve().then(() => executionAsyncId())
  return first !== second
}

describe('request context', () => {
  it('runs promise hooks only while a request is live, and carries each request its own id', async () => {
    // Nothing else in this file's process enables an AsyncLocalStorage.
    expect(await promiseHooksOn()).toBe(false)
    const first: RequestContext = { requestId: 'req-1' }
    const second: RequestContext = { requestId: 'req-2' }
    const seenFirst = runWithRequestContext(first, async () => {
      await new Promise((resolve) => setImmediate(resolve))
      return { id: currentRequestId(), hooks: await promiseHooksOn() }
    })
    let releaseSecond!: () => void
    const secondWaits = new Promise<void>((resolve) => (releaseSecond = resolve))
    const seenSecond = runWithRequestContext(second, async () => {
      await secondWaits
      return currentRequestId()
    })
    expect(await seenFirst).toEqual({ id: 'req-1', hooks: true })
    // One request ended, one still live: the store stays on for the live one.
    endRequestContext(first)
    expect(await promiseHooksOn()).toBe(true)
    releaseSecond()
    expect(await seenSecond).toBe('req-2')
    endRequestContext(second)
    endRequestContext(second)
    // None left: no hooks, and no id outside a request.
    expect(await promiseHooksOn()).toBe(false)
    expect(currentRequestId()).toBeUndefined()
    // The next request turns the store on again.
    const third: RequestContext = { requestId: 'req-3' }
    const seenThird = await runWithRequestContext(third, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      return currentRequestId()
    })
    expect(seenThird).toBe('req-3')
    endRequestContext(third)
    expect(await promiseHooksOn()).toBe(false)
  })

  it('gives a context entered after its response closed no id, and never counts it as live', async () => {
    const over: RequestContext = { requestId: 'req-over', ended: true }
    const seen = await runWithRequestContext(over, async () => {
      await Promise.resolve()
      return currentRequestId()
    })
    expect(seen).toBeUndefined()
  })
})
