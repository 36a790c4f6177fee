import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { backendOfEnv, sharedStorageEnv } from '../support/backends'
import { readLegacyFixture, writeLegacyData, type LegacyFixture } from '../support/legacy-events'
import { compareCursors } from '../../storage/repositories/event-log'
import type { NamespaceEvent } from '../../server/events/schemas'
import { buildWebhookEventsSchema } from '../../server/events/json-schema'
import { Receiver } from './support/receiver'
import { startBuiltServer, waitFor, type BuiltServer } from './support/built-server'

/**
 * The current build started on storage the release before events were stored once left behind
 * (test/fixtures/legacy-events/: a `stalled` webhook with a batch in flight and a full buffer
 * holding an overflow notice, a `steady` one that had delivered everything, two events no router
 * pass saw). It migrates at start; each receiver then gets what it was owed exactly once, in order.
 */
interface World {
  fixture: LegacyFixture
  receivers: Map<string, Receiver>
  expected: Map<string, string[]>
  /** The stalled webhook's batch in flight: retried first, under its old webhook-id. */
  batch: { webhook: string; deliveryId: string }
}

async function prepare(env: Record<string, string>, schema: object): Promise<World> {
  const fixture = readLegacyFixture()
  const receivers = new Map<string, Receiver>()
  const expected = new Map<string, string[]>()
  const routed = (fixture.values['wh-router-cursor'] as { cursor: string }).cursor
  const unrouted = fixture.logs.events
    .filter((entry) => compareCursors(entry.id, routed) > 0)
    .map((entry) => (entry.value as NamespaceEvent).id)
  let batch: World['batch'] | null = null
  for (const [key, value] of Object.entries(fixture.values)) {
    if (!/^ns:default:wh:[^:]+$/.test(key)) continue
    const doc = value as { id: string; name: string; url: string; secret: string }
    const receiver = await new Receiver().start(schema)
    receiver.secrets = [doc.secret]
    receivers.set(doc.id, receiver)
    doc.url = receiver.url
    const inFlight = fixture.values[`ns:default:wh-batch:${doc.id}`] as
      { deliveryId: string; items: NamespaceEvent[] } | undefined
    const buffer = (fixture.queues[`wh-buffer:default:${doc.id}`] ?? []) as NamespaceEvent[]
    if (inFlight) batch = { webhook: doc.id, deliveryId: inFlight.deliveryId }
    expected.set(doc.id, [...(inFlight?.items ?? []), ...buffer].map((event) => event.id).concat(unrouted))
  }
  const backend = await backendOfEnv(env)
  await writeLegacyData(backend, fixture)
  await backend.close()
  return { fixture, receivers, expected, batch: batch! }
}

describe('the current build on storage of the release before events were stored once', () => {
  const servers: BuiltServer[] = []
  const receivers: Receiver[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.kill('SIGKILL')
    for (const receiver of receivers.splice(0)) await receiver.stop()
  })

  const cases = [
    { storage: 'fs', processes: 1 },
    { storage: 'redis', processes: 1 },
    { storage: 'redis', processes: 2 },
    { storage: 'cluster', processes: 2 },
  ] as const

  it.each(cases)(
    'delivers every owed event once, in order ($storage, $processes process(es) starting at once)',
    async ({ storage, processes }) => {
      const base = {
        BOOTSTRAP_TOKEN: readLegacyFixture().token,
        WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
        WEBHOOK_LEASE: '2s',
      }
      const env =
        storage === 'fs'
          ? { ...base, DATA_DIR: mkdtempSync(join(tmpdir(), 'pf-legacy-')) }
          : { ...base, ...(await sharedStorageEnv(storage, 'legacy')) }
      // The schema the server publishes; built here, as the receivers must listen before it starts.
      const schema = buildWebhookEventsSchema('http://127.0.0.1')
      const world = await prepare(env, schema)
      receivers.push(...world.receivers.values())

      servers.push(...(await Promise.all(Array.from({ length: processes }, () => startBuiltServer(env)))))
      const migrated = servers.filter((server) => server.output().includes('"step":"events-once"'))
      expect(migrated).toHaveLength(1)

      for (const [id, receiver] of world.receivers) {
        const want = world.expected.get(id)!
        await waitFor(() => receiver.events().length >= want.length, 20_000, `deliveries to ${id}`)
        // Nothing more is waiting: what arrived is all that will.
        await waitFor(
          async () => {
            const state = await fetch(`${servers[0].url}/v1/default/webhooks/${id}/state`, {
              headers: { authorization: `Bearer ${env.BOOTSTRAP_TOKEN}` },
            })
            return ((await state.json()) as { bufferedEvents: number }).bufferedEvents === 0
          },
          20_000,
          `${id} drained`,
        )
        expect(receiver.events().map((event) => event.id)).toEqual(want)
        expect(receiver.receipts.every((r) => r.verifiedWith.length === 1 && r.schemaErrors.length === 0)).toBe(true)
      }
      const stalled = world.receivers.get(world.batch.webhook)!
      expect(stalled.receipts[0].headers['webhook-id']).toBe(world.batch.deliveryId)
      expect(world.expected.get(world.batch.webhook)).toHaveLength(6)
    },
  )
})
