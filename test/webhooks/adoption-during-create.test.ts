import { afterEach, describe, expect, it } from 'vitest'
import type { KeyValueStore, TxOptions, TxOutcome } from '../../storage/backend'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import { waitFor } from '../support/wait-for'
import { NS, startHarness, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

/** A promise and the function that resolves it. */
function opened() {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

/**
 * Holds the transaction that creates a webhook (its document, cursor and namespace index) on the
 * real store, after the global index already names it, until `release()`. A cursor read of that
 * webhook meanwhile is answered only once the creation has committed: the order in which a delivery
 * host on a Redis Cluster loaded no cursor and then found the document (bench:webhooks, api2).
 */
function holdCreation(kv: KeyValueStore) {
  const transact = kv.transact.bind(kv)
  const get = kv.get.bind(kv)
  const reached = opened()
  const gate = opened()
  let created: Promise<unknown> | null = null
  let id: string | null = null
  let holding = false
  let cursorReadsWhileHeld = 0
  const release = () => {
    holding = false
    gate.open()
  }
  kv.transact = <R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
    options?: TxOptions,
  ) => {
    const doc = keys.find((key) => key.startsWith(webhookKeys.webhook(NS, '')))
    if (created || !doc || !keys.includes(webhookKeys.index(NS))) return transact(keys, body, options)
    id = doc.slice(doc.lastIndexOf(':') + 1)
    const commit = gate.promise.then(() => transact(keys, body, options))
    created = commit
    holding = true
    reached.open()
    return commit
  }
  kv.get = async <T>(key: string) => {
    const value = await get<T>(key)
    if (holding && key === webhookKeys.cursor(NS, id!)) {
      cursorReadsWhileHeld++
      release()
      await created!.catch(() => undefined)
    }
    return value
  }
  return {
    reached: reached.promise,
    release,
    id: () => id!,
    cursorReadsWhileHeld: () => cursorReadsWhileHeld,
  }
}

describe.each(['cluster', 'redis'] as const)('a webhook created while a delivery host works (%s)', (backend) => {
  it('is adopted once stored and delivers, never with a cursor it did not load', async () => {
    h = await startHarness({ backend, clock: 'system' })
    // A log with entries: the new webhook's cursor starts after them, not at the log's start.
    await h.appendEvents(2)
    const held = holdCreation(h.backend.keyValue)
    const creating = h.createWebhook()
    await held.reached
    // A pass asked for now sees the held creation, even when the timer started one before it.
    await h.engine.host.tick()
    const adoptedWhileHeld = h.engine.host.owned().includes(`${NS}/${held.id()}`)
    held.release()
    const webhook = await creating
    expect(webhook.id).toBe(held.id())

    await h.engine.host.tick()
    const events = await h.appendEvents(3)
    // Before the fix the actor adopted mid-creation failed every take ("changed elsewhere") and
    // retried 30 s later, and again, while holding the lease: nothing arrived.
    await waitFor(() => h.receiver.events().length >= 3, 10_000, 'deliveries to the new webhook')
    expect(h.receiver.events().map((event) => event.id)).toEqual(events.map((event) => event.id))
    expect(h.engine.host.owned()).toEqual([`${NS}/${webhook.id}`])
    // No actor for a webhook whose document was not stored yet, and no look at its cursor then.
    expect(adoptedWhileHeld).toBe(false)
    expect(held.cursorReadsWhileHeld()).toBe(0)
  })

  it('a pass asked for while one runs is run again after it: a webhook created meanwhile is adopted', async () => {
    h = await startHarness({ backend, clock: 'system' })
    await h.engine.host.tick()
    // The next pass reads the index of every webhook, then waits for the gate: it read before
    // the creation below, as a pass the timer started just before a creation's signal does.
    const kv = h.backend.keyValue
    const get = kv.get.bind(kv)
    const reached = opened()
    const gate = opened()
    let held = false
    kv.get = async <T>(key: string) => {
      const value = await get<T>(key)
      if (!held && key === webhookKeys.globalIndex()) {
        held = true
        reached.open()
        await gate.promise
      }
      return value
    }
    const running = h.engine.host.tick()
    await reached.promise
    const webhook = await h.createWebhook()
    // What the creation's signal does: before the fix it joined the running pass, which never
    // saw the webhook, and the webhook waited for the next timed pass.
    const asked = h.engine.host.tick()
    gate.open()
    await Promise.all([running, asked])
    expect(h.engine.host.owned()).toEqual([`${NS}/${webhook.id}`])
  })
})
