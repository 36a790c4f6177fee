import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Backend, RedisBackend } from '../../storage'

/**
 * Storage as the release before events were stored once left it (test/fixtures/legacy-events/):
 * plain values by key, logs (Redis stream ids and entries) and queues (items, oldest first).
 */
export interface LegacyFixture {
  /** BOOTSTRAP_TOKEN of the capturing run (a test token): the API answers it after migration. */
  token: string
  values: Record<string, unknown>
  logs: Record<string, { id: string; value: unknown }[]>
  queues: Record<string, unknown[]>
}

/** The router cursor of the old release: `{ cursor }`, an entry of the global `events` log. */
const ROUTER_CURSOR = 'wh-router-cursor'

export function readLegacyFixture(): LegacyFixture {
  return JSON.parse(
    readFileSync(fileURLToPath(new URL('../fixtures/legacy-events/legacy-events.json', import.meta.url)), 'utf8'),
  )
}

const pad = (n: number) => n.toString().padStart(12, '0')

/**
 * Writes `fixture` through `backend` in the raw form the old release stored: on Redis a stream per
 * log (ids kept) and a list per queue; on fs one key per log entry (`log:<name>:<slot>` holding
 * `{t, v}`) and per queue item. Log times are moved forward so the newest entry is `now`
 * (relative order kept), so LOG_RETENTION never finds the fixture too old.
 */
export async function writeLegacyData(backend: Backend, fixture: LegacyFixture, now = Date.now()): Promise<void> {
  const newest = Math.max(...Object.values(fixture.logs).flatMap((entries) => entries.map((entry) => msOf(entry.id))))
  const shift = (id: string) => `${msOf(id) + now - newest}-${id.split('-')[1]}`
  const routed = (fixture.values[ROUTER_CURSOR] as { cursor: string } | undefined)?.cursor
  for (const [key, value] of Object.entries(fixture.values)) {
    if (key !== ROUTER_CURSOR) await backend.keyValue.set(key, value)
  }
  // The raw layout differs by kind: Redis streams and lists, or one key per entry.
  if (backend.kind === 'redis') {
    const { redis, prefix } = backend as RedisBackend
    for (const [name, entries] of Object.entries(fixture.logs))
      for (const entry of entries)
        await redis.xadd(`${prefix}:log:${name}`, shift(entry.id), 'd', JSON.stringify(entry.value))
    for (const [name, items] of Object.entries(fixture.queues))
      await redis.rpush(`${prefix}:queue:${name}`, ...items.map((item) => JSON.stringify(item)))
    if (routed) await backend.keyValue.set(ROUTER_CURSOR, { cursor: shift(routed) })
    return
  }
  for (const [name, entries] of Object.entries(fixture.logs))
    for (const [slot, entry] of entries.entries())
      await backend.keyValue.set(`log:${name}:${pad(slot)}`, { t: msOf(shift(entry.id)), v: entry.value })
  for (const [name, items] of Object.entries(fixture.queues))
    for (const [slot, item] of items.entries()) await backend.keyValue.set(`queue:${name}:${pad(slot)}`, item)
  if (routed)
    await backend.keyValue.set(ROUTER_CURSOR, { cursor: pad(fixture.logs.events.findIndex((e) => e.id === routed)) })
}

function msOf(id: string): number {
  return Number(id.split('-')[0])
}
