import { LRUCache } from 'lru-cache'
import type { ChangeScope, SignalBus } from '../ports'

/**
 * How long a process reuses what authenticating a token read (or a namespace's firewall write
 * stamp), and how many it keeps. A change made through another process ends the reuse when its
 * notification arrives, and notifications that may have been missed end all of it
 * (`followChanges`); the interval is a backstop beyond that.
 */
export const RECENT_LOOKUP_LIMITS = { ttlMs: 1_000, max: 10_000 }

interface Entry<V> {
  ns: string
  at: number
  all: number
  generation: number
  value: V
}

/**
 * Reads reused for a short time, per key, within one namespace. `forget(ns)` ends every entry of
 * the namespace and `forgetAll()` every entry; a read that started before either is not kept
 * (it is stored under the generation it started in), so a change is never undone by a slow read.
 * @example const generation = recent.generation('acme'); ...read...; recent.set(key, 'acme', generation, value)
 */
export class RecentLookups<V> {
  private readonly entries: LRUCache<string, Entry<V>>
  /**
   * Per namespace: bumped by `forget`. Only namespaces something changed in are listed, at most
   * `max`: a namespace dropped from here would read generation 0 again and could revive an entry
   * stored under 0, so dropping one ends every entry (`forgetAll`).
   */
  private readonly generations: LRUCache<string, number>
  private all = 0
  /** Reads running now, by key (see `through`); each ends with its read. */
  private readonly reading = new Map<string, { ns: string; all: number; generation: number; value: Promise<V> }>()

  /** `now`: a monotonic clock in ms (injected in tests). */
  constructor(
    private readonly limits: { ttlMs: number; max: number } = RECENT_LOOKUP_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.entries = new LRUCache({ max: limits.max })
    this.generations = new LRUCache({
      max: limits.max,
      dispose: (_generation, _ns, reason) => {
        if (reason === 'evict') this.forgetAll()
      },
    })
  }

  /** The stamp a read starting now is stored under (pass it to `set`). */
  generation(ns: string): { all: number; generation: number } {
    return { all: this.all, generation: this.generations.get(ns) ?? 0 }
  }

  get(key: string, ns: string): V | undefined {
    const entry = this.entries.get(key)
    if (!entry || entry.ns !== ns) return undefined
    if (this.now() - entry.at >= this.limits.ttlMs) {
      this.entries.delete(key)
      return undefined
    }
    const now = this.generation(ns)
    return entry.all === now.all && entry.generation === now.generation ? entry.value : undefined
  }

  /**
   * The kept value of `key`, else what `read()` gives (kept when `keep` says so). Calls that ask
   * while a read runs share it when nothing was forgotten since it started: under load, an
   * interval's end no longer sends every call in flight to storage at once (#27).
   */
  through(key: string, ns: string, read: () => Promise<V>, keep: (value: V) => boolean): Promise<V> {
    const hit = this.get(key, ns)
    if (hit !== undefined) return Promise.resolve(hit)
    const started = this.generation(ns)
    const running = this.reading.get(key)
    if (running && running.ns === ns && running.all === started.all && running.generation === started.generation)
      return running.value
    const value = read().then((found) => {
      if (keep(found)) this.set(key, ns, started, found)
      return found
    })
    const entry = { ns, ...started, value }
    this.reading.set(key, entry)
    const done = () => {
      if (this.reading.get(key) === entry) this.reading.delete(key)
    }
    value.then(done, done)
    return value
  }

  /** Keeps `value` unless something was forgotten since `started` was taken. */
  set(key: string, ns: string, started: { all: number; generation: number }, value: V): void {
    const now = this.generation(ns)
    if (started.all !== now.all || started.generation !== now.generation) return
    this.entries.set(key, { ns, at: this.now(), ...started, value })
  }

  forget(ns: string): void {
    this.generations.set(ns, (this.generations.get(ns) ?? 0) + 1)
  }

  forgetAll(): void {
    this.all++
    this.entries.clear()
  }

  /** Namespaces whose generation is kept now. */
  get namespaces(): number {
    return this.generations.size
  }

  /** Entries kept now. */
  get size(): number {
    return this.entries.size
  }
}

/**
 * Ends `recent`'s entries as `signals` tell of changes from any process: a namespace's when a
 * change of it in `scope` was announced (`TxWrites.announce`; events appended alone end nothing),
 * all of them when notifications may have been missed. Keep an entry only while
 * `signals.eventsLive()`: a change then always reaches this process.
 * @example this.listening ??= followChanges(backend.signals, this.recent, 'access')
 */
export function followChanges(
  signals: Pick<SignalBus, 'onChanges' | 'onEventsMissed'>,
  recent: Pick<RecentLookups<unknown>, 'forget' | 'forgetAll'>,
  scope: ChangeScope,
): () => void {
  const offChanges = signals.onChanges((change) => change.scope === scope && recent.forget(change.ns))
  const offMissed = signals.onEventsMissed(() => recent.forgetAll())
  return () => {
    offChanges()
    offMissed()
  }
}
