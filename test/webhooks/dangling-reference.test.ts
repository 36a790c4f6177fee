import { afterEach, describe, expect, it } from 'vitest'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import { NS, startHarness, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

/** What a process that stopped between a webhook delete's commit and its reference's removal leaves. */
async function addDanglingRef(harness: Harness, ref: string): Promise<void> {
  const key = webhookKeys.globalIndex()
  await harness.backend.keyValue.transact([key], (values) => {
    const items = (values.get(key) as { items: Record<string, true> } | null)?.items ?? {}
    return { writes: { set: { [key]: { items: { ...items, [ref]: true } } } }, result: undefined }
  })
}

describe.each(['memory', 'redis'] as const)('a global-index reference that names no webhook (%s)', (backend) => {
  it('is dropped once it has named none for five minutes; a stored webhook keeps its reference', async () => {
    h = await startHarness({ backend })
    const kept = await h.createWebhook()
    const gone = `${NS}/wh-gone`
    await addDanglingRef(h, gone)
    const refs = async () => (await h.services.webhooks.allRefs()).sort()

    await h.engine.host.tick()
    await h.runFor(4 * 60_000)
    await h.engine.host.tick()
    // Not sooner: a reference also precedes every creation, by the length of its transaction.
    expect(await refs()).toEqual([`${NS}/${kept.id}`, gone].sort())

    await h.runFor(61_000)
    await h.engine.host.tick()
    await h.idle()
    expect(await refs()).toEqual([`${NS}/${kept.id}`])
    expect(h.engine.host.owned()).toEqual([`${NS}/${kept.id}`])
  })
})
