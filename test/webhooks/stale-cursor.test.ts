import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for'
import { NS, startHarness, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

describe('a webhook whose stored cursor changed under its actor', () => {
  it('is retired and adopted again from storage, and delivers what comes after the stored cursor', async () => {
    h = await startHarness({ clock: 'system' })
    const webhook = await h.createWebhook()
    await h.engine.host.tick()
    const first = await h.appendEvents(2)
    await waitFor(() => h.receiver.events().length === 2, 10_000, 'the first two deliveries')
    await h.idle()

    // Another writer (a process that took the webhook over while this one stalled) stored the
    // cursor at the first event: the actor here still holds the one after the second.
    const entry = (await h.services.events.read(NS, null, 100)).find((logged) => logged.value.id === first[0].id)!
    expect(entry).toBeDefined()
    const cursors = h.services.webhooks.cursors
    const stored = await cursors.get(NS, webhook.id)
    expect(stored?.batch ?? null).toBeNull()
    await cursors.update(NS, webhook.id, () => ({
      next: { cursor: entry.cursor, batch: null },
      events: [],
      result: undefined,
    }))

    const later = await h.appendEvents(2)
    // Before, the take failed as "changed elsewhere" and was retried 30 s later, and again, while
    // the lease was renewed: nothing more arrived. Now the actor stops, gives its lease back, and the
    // next pass adopts the webhook from its stored cursor: the second event again, then the new ones.
    await waitFor(
      async () => {
        await h.engine.host.tick()
        return h.receiver.events().length >= 5
      },
      10_000,
      'deliveries from the stored cursor',
    )
    expect(h.receiver.events().map((event) => event.id)).toEqual([
      first[0].id,
      first[1].id,
      first[1].id,
      later[0].id,
      later[1].id,
    ])
    expect(h.engine.host.owned()).toEqual([`${NS}/${webhook.id}`])
  })
})
