import type { RetainedLogKind, RetainedLogRepository } from '../../storage/repositories/retained-logs'
import type { Clock } from '../common/clock'
import { parseDuration } from '../common/duration'
import { logger } from '../app/logger'
import { observeRetentionRun, setLeaseOwnership } from './metrics'

export type { RetainedLogKind }

interface RetentionOptions {
  /** The logs to trim and the retention lease. */
  logs: RetainedLogRepository
  clock: Clock
  /** Entries older than this are removed (`LOG_RETENTION`, default 30d). */
  retentionMs: number
  /** Time between passes (`LOG_RETENTION_INTERVAL`, default 1m). */
  intervalMs: number
  /** This process's lease owner id. */
  owner: string
  /** Timer seam; returns a cancel function. Default: an unref'd setInterval. */
  every?: (run: () => void, ms: number) => () => void
  /**
   * Other stores bounded by the same pass and lease, by name (e.g. webhook metric buckets):
   * each gets the pass's time and returns how many items it removed.
   */
  prune?: Record<string, (now: number) => Promise<number>>
}

interface RetentionReport {
  /** Entries written before this instant (ms) were dropped. */
  cutoff: number
  logs: number
  removed: Record<RetainedLogKind, number>
  /** Items each `prune` entry removed. */
  pruned: Record<string, number>
}

export interface RetentionSettings {
  retentionMs: number
  intervalMs: number
}

/** Reads `LOG_RETENTION` and `LOG_RETENTION_INTERVAL` (server/app/config.ts); throws on an invalid duration. */
export function retentionSettings(env: NodeJS.ProcessEnv): RetentionSettings {
  return {
    retentionMs: parseDuration(env.LOG_RETENTION || '30d'),
    intervalMs: parseDuration(env.LOG_RETENTION_INTERVAL || '1m'),
  }
}

/** Every log retention applies to (see RetainedLogRepository.list). */
export function retainedLogs(logs: RetainedLogRepository): Promise<{ kind: RetainedLogKind; log: string }[]> {
  return logs.list()
}

/**
 * Trims the logs continuously so storage stays bounded under constant traffic. Several
 * processes may run one each: a lease makes exactly one of them do the work per pass.
 */
export class RetentionWorker {
  private cancel: (() => void) | null = null
  private running: Promise<RetentionReport | null> | null = null

  constructor(private readonly options: RetentionOptions) {}

  /** One pass; null when another process holds the retention lease (or a pass is still running here). */
  runOnce(): Promise<RetentionReport | null> {
    if (this.running) return Promise.resolve(null)
    this.running = this.pass().finally(() => (this.running = null))
    return this.running
  }

  private async pass(): Promise<RetentionReport | null> {
    const { logs: store, clock, retentionMs, intervalMs, owner } = this.options
    // The lease outlives a few missed passes, so a crashed holder is replaced within ~3 intervals.
    const owned = await store.lease.acquire(owner, Math.max(3 * intervalMs, 10_000))
    setLeaseOwnership(owned ? 1 : 0, 'retention')
    if (!owned) return null
    const now = clock.now()
    const cutoff = now - retentionMs
    const removed: Record<RetainedLogKind, number> = { event: 0, audit: 0, firewall: 0 }
    const logs = await store.list()
    for (const { kind, log } of logs) removed[kind] += await store.trimBefore(log, cutoff)
    observeRetentionRun(removed)
    const pruned: Record<string, number> = {}
    for (const [name, prune] of Object.entries(this.options.prune ?? {})) pruned[name] = await prune(now)
    const total =
      removed.event + removed.audit + removed.firewall + Object.values(pruned).reduce((sum, n) => sum + n, 0)
    if (total > 0)
      logger.info('log retention pass', {
        cutoff: new Date(cutoff).toISOString(),
        logs: logs.length,
        ...removed,
        ...pruned,
      })
    return { cutoff, logs: logs.length, removed, pruned }
  }

  /**
   * Runs a pass now and then every interval; failures are logged and retried next time.
   * Resolves when the first pass is over (callers need not wait).
   */
  start(): Promise<void> {
    if (this.cancel) return Promise.resolve()
    const tick = () =>
      this.runOnce().then(
        () => undefined,
        (error) => logger.error('log retention failed', { error: String(error) }),
      )
    const every = this.options.every ?? defaultEvery
    this.cancel = every(() => void tick(), this.options.intervalMs)
    return tick()
  }

  /** Stops the timer, waits for a running pass and hands the lease back. */
  async stop(): Promise<void> {
    this.cancel?.()
    this.cancel = null
    await this.running?.catch(() => null)
    await this.options.logs.lease.release(this.options.owner).catch(() => undefined)
    setLeaseOwnership(0, 'retention')
  }
}

function defaultEvery(run: () => void, ms: number): () => void {
  const timer = setInterval(run, ms)
  timer.unref()
  return () => clearInterval(timer)
}
