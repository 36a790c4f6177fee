import type { Backend, LogEntry } from '../backend'
import type { StoredEvent } from '../model/events'
import { compareCursors } from '../repositories/event-log'
import {
  legacyNames,
  readLegacyState,
  removeLegacyState,
  taggedNames,
  type LegacyState,
  type LegacyWebhook,
} from './legacy-events'

/** Set once every event and cursor is written, before the old keys go: a repeated run only removes them. */
const CONVERTED = 'storage:events-once-converted'
const PAGE = 1_000

/**
 * Layout 2 -> 3: events stored once. The old layout kept one global `events` log, a router cursor
 * into it and, per webhook, a buffer (a queue of copied events) and the batch in flight taken out
 * of it. This step converts them, so that a receiver gets what it was owed exactly once, in order:
 *
 * - **Namespace logs.** Every entry of the global log is appended to its namespace's log, in
 *   order, dated as it was (Redis stream id time, fs entry time), so LOG_RETENTION ages it as
 *   before. An event already in the namespace log (an interrupted run wrote it) is not appended
 *   again.
 * - **Notices only a buffer held.** The old router put its overflow notice
 *   (`webhook.rate_limited`) into the buffer alone. Such an event of the webhook itself is added
 *   to the namespace log next to its neighbours in the same buffer (or batch): right after the
 *   preceding one the global log holds, else right before the following one, else after the last
 *   routed entry. A `webhook.*` event reaches only the webhook it names, so no other webhook sees it.
 * - **Buffered events the global log no longer holds** (past LOG_RETENTION while the copy waited)
 *   are not carried over: one namespace log cannot give them back to only the webhooks still owing
 *   them, and from now on the documented rule applies (a webhook that does not catch up within
 *   LOG_RETENTION loses what was trimmed).
 * - **Cursors.** A webhook's cursor is the entry just before its first buffered event, so its new
 *   buffer (matching entries after the cursor) is its old buffer followed by the events the router
 *   had not routed yet. With an empty buffer it is the last entry the router had routed. Matching
 *   is by the webhook's subscription at migration time, as after any restart of the new engine.
 * - **The batch in flight** becomes the cursor's batch under its old delivery id (the range from
 *   just before its first event to its last): the restored actor retries it with the same
 *   `webhook-id`, and it is done before anything after it, as before. An event buffered twice (a
 *   router pass repeated after a crash), or buffered and also after the router cursor, is
 *   delivered once.
 * - Then the global log, the buffers, the batches, the router cursor and its lease are removed.
 *
 * Idempotent: everything is read from the old keys, which stay until the end; appends skip events
 * already in a namespace log and cursors are overwritten, so an interrupted run is repeated. On a
 * Redis Cluster the global log, the buffers and the namespace logs live in different slots: every
 * write here is a single-key operation. Storage with nothing of the old layout is left untouched.
 */
export async function storeEventsOnce(backend: Backend): Promise<number> {
  const state = await readLegacyState(backend)
  let changed = 0
  if (!(await backend.keyValue.has(CONVERTED))) {
    if (!state.present) return 0
    changed += await convert(backend, state)
    await backend.keyValue.set(CONVERTED, { at: new Date().toISOString() })
  }
  changed += await removeLegacyState(backend, state)
  await backend.keyValue.delete(CONVERTED)
  return changed
}

/** Where an entry of interest landed: its cursor and the cursor of the entry before it. */
interface Placed {
  cursor: string
  previous: string | null
}

interface Owed {
  batch: StoredEvent[]
  buffer: StoredEvent[]
}

type Emission = { kind: 'entry'; time: number; event: StoredEvent } | { kind: 'routed-end' }

/** Writes the namespace logs and the cursors; returns how many entries and cursors it wrote. */
async function convert(backend: Backend, state: LegacyState): Promise<number> {
  const owed = new Map(state.webhooks.map((webhook) => [webhook, owedEvents(webhook)]))
  const wanted = new Set([...owed.values()].flatMap(({ batch, buffer }) => [...batch, ...buffer].map((e) => e.id)))
  const inGlobalLog = new Set<string>()
  for await (const entry of globalLog(backend)) if (wanted.has(entry.value.id)) inGlobalLog.add(entry.value.id)
  const placement = placeNotices(owed, inGlobalLog)

  const writer = new NamespaceLogWriter(backend, wanted)
  const routedEndWritten = new Set<string>()
  const routedEnd = (ns: string) => {
    routedEndWritten.add(ns)
    writer.emit(ns, { kind: 'routed-end' })
    for (const notice of placement.atRoutedEnd.get(ns) ?? [])
      writer.emit(ns, { kind: 'entry', time: Date.parse(notice.time), event: notice })
  }
  for await (const entry of globalLog(backend)) {
    const event = entry.value
    const ns = event.namespace
    const routed = state.routed !== null && compareCursors(entry.cursor, state.routed) <= 0
    if (!routed && !routedEndWritten.has(ns)) routedEnd(ns)
    // A notice is dated like the entry it sits next to.
    const next = (notice: StoredEvent) => writer.emit(ns, { kind: 'entry', time: entry.time, event: notice })
    placement.before.get(event.id)?.forEach(next)
    writer.emit(ns, { kind: 'entry', time: entry.time, event })
    placement.after.get(event.id)?.forEach(next)
    if (writer.pending >= PAGE) await writer.flush()
  }
  for (const ns of new Set(state.webhooks.map((webhook) => webhook.ns))) if (!routedEndWritten.has(ns)) routedEnd(ns)
  await writer.flush()

  let written = writer.appended
  for (const webhook of state.webhooks) {
    const carried = (events: StoredEvent[]) => events.filter((event) => writer.placed.has(event.id))
    const batchEvents = carried(owed.get(webhook)!.batch)
    const buffered = carried(owed.get(webhook)!.buffer)
    const batch = batchEvents.length
      ? {
          deliveryId: webhook.batch!.deliveryId,
          eventIds: batchEvents.map((event) => event.id),
          after: writer.placed.get(batchEvents[0].id)!.previous,
          last: writer.placed.get(batchEvents[batchEvents.length - 1].id)!.cursor,
        }
      : null
    let cursor = buffered.length
      ? writer.placed.get(buffered[0].id)!.previous
      : (writer.routedEnd.get(webhook.ns) ?? null)
    if (batch && compareCursors(batch.last, cursor) > 0) cursor = batch.last
    await backend.keyValue.set(taggedNames.cursor(webhook.ns, webhook.id), { cursor, batch })
    written++
  }
  return written
}

/** The batch's events and the buffer's, oldest first; an event in both (or twice) counts once, first. */
function owedEvents(webhook: LegacyWebhook): Owed {
  const seen = new Set<string>()
  const once = (events: StoredEvent[]) =>
    events.filter((event) => {
      if (seen.has(event.id)) return false
      seen.add(event.id)
      return true
    })
  const batch = once(webhook.batch?.items ?? [])
  return { batch, buffer: once(webhook.buffer) }
}

/** An event about this webhook (`webhook.*` naming it): it reaches no other webhook. */
function ownNotice(event: StoredEvent, webhook: LegacyWebhook): boolean {
  return event.type.startsWith('webhook.') && (event.data as { webhook?: string }).webhook === webhook.id
}

/**
 * Where the notices only buffers held go: next to a neighbour the global log holds, within the
 * same list (batch or buffer). After the preceding one, else before the following one, else after
 * the routed end. Never anchored across the two lists: events dropped after the batch was taken lie
 * between them in the log, and must stay before the webhook's cursor.
 */
function placeNotices(owed: Map<LegacyWebhook, Owed>, inGlobalLog: Set<string>) {
  const after = new Map<string, StoredEvent[]>()
  const before = new Map<string, StoredEvent[]>()
  const atRoutedEnd = new Map<string, StoredEvent[]>()
  const add = (map: Map<string, StoredEvent[]>, key: string, event: StoredEvent) => {
    const list = map.get(key)
    if (list) list.push(event)
    else map.set(key, [event])
  }
  for (const [webhook, lists] of owed)
    for (const events of [lists.batch, lists.buffer])
      events.forEach((event, index) => {
        if (inGlobalLog.has(event.id) || !ownNotice(event, webhook)) return
        const preceding = events
          .slice(0, index)
          .reverse()
          .find((other) => inGlobalLog.has(other.id))
        const following = events.slice(index + 1).find((other) => inGlobalLog.has(other.id))
        if (preceding) add(after, preceding.id, event)
        else if (following) add(before, following.id, event)
        else add(atRoutedEnd, webhook.ns, event)
      })
  return { after, before, atRoutedEnd }
}

async function* globalLog(backend: Backend): AsyncGenerator<LogEntry<StoredEvent>> {
  let after: string | null = null
  for (;;) {
    const page: LogEntry<StoredEvent>[] = await backend.logs.range<StoredEvent>(legacyNames.eventLog, {
      after,
      limit: PAGE,
    })
    yield* page
    if (page.length < PAGE) return
    after = page[page.length - 1].cursor
  }
}

/**
 * Appends to the namespace logs in emission order, skipping events a namespace log already holds,
 * and notes where the events of interest and each namespace's routed end landed.
 */
class NamespaceLogWriter {
  readonly placed = new Map<string, Placed>()
  /** Per namespace: the cursor of the last entry the old router had routed (null: none). */
  readonly routedEnd = new Map<string, string | null>()
  private readonly queued = new Map<string, Emission[]>()
  private readonly last = new Map<string, string | null>()
  private readonly existing = new Map<string, Map<string, string>>()
  pending = 0
  /** Entries this run appended. */
  appended = 0

  constructor(
    private readonly backend: Backend,
    private readonly wanted: Set<string>,
  ) {}

  emit(ns: string, emission: Emission): void {
    const queued = this.queued.get(ns)
    if (queued) queued.push(emission)
    else this.queued.set(ns, [emission])
    this.pending++
  }

  async flush(): Promise<void> {
    for (const [ns, emissions] of this.queued) {
      const existing = await this.existingOf(ns)
      const fresh = emissions.filter(
        (emission): emission is Extract<Emission, { kind: 'entry' }> =>
          emission.kind === 'entry' && !existing.has(emission.event.id),
      )
      const cursors = await this.backend.logs.appendAt(
        taggedNames.eventLog(ns),
        fresh.map(({ time, event }) => ({ time, value: event })),
      )
      const appended = new Map(fresh.map((emission, index) => [emission.event.id, cursors[index]]))
      let last = this.last.get(ns) ?? null
      for (const emission of emissions) {
        if (emission.kind === 'routed-end') {
          this.routedEnd.set(ns, last)
          continue
        }
        const cursor = existing.get(emission.event.id) ?? appended.get(emission.event.id)!
        if (this.wanted.has(emission.event.id)) this.placed.set(emission.event.id, { cursor, previous: last })
        last = cursor
      }
      this.last.set(ns, last)
      this.appended += fresh.length
    }
    this.queued.clear()
    this.pending = 0
  }

  /** Events a namespace log holds already (an interrupted run wrote them): id -> cursor. */
  private async existingOf(ns: string): Promise<Map<string, string>> {
    let found = this.existing.get(ns)
    if (!found) {
      found = new Map()
      let after: string | null = null
      for (;;) {
        const page: LogEntry<StoredEvent>[] = await this.backend.logs.range<StoredEvent>(taggedNames.eventLog(ns), {
          after,
          limit: PAGE,
        })
        for (const entry of page) found.set(entry.value.id, entry.cursor)
        if (page.length < PAGE) break
        after = page[page.length - 1].cursor
      }
      this.existing.set(ns, found)
    }
    return found
  }
}
