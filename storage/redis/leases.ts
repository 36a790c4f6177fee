import type { LeaseStore } from '../ports'
import { LEASE_CALLS } from '../redis-scripts'
import { evalScript } from '../redis-eval'
import { hashTagOf } from '../redis-target'
import type { RedisConnection } from './connection'

/** One lease call waiting for its turn's script call. */
interface LeaseCall {
  key: string
  operation: 'a' | 'r' | 'o'
  owner: string
  ttl: string
  resolve: (answer: unknown) => void
  reject: (error: unknown) => void
}

/** Calls per script run at most: a turn with more is split, so no one run holds Redis long. */
const CALLS_PER_RUN = 500

/**
 * Leases on Redis: one key per lease holding its owner, expiring with it.
 *
 * The calls made in one turn of the event loop go out together, in order, as one script run (one
 * per hash tag on a cluster: a webhook's lease key carries none, so there each is a run of its
 * own). When one event reaches 100 webhooks, each take extends its webhook's lease for the attempt
 * that follows, and each ended attempt returns it: 200 script runs a burst, each a command built,
 * a reply parsed and a promise settled, on the path of the burst's first request. Ordered in one
 * queue, a release never overtakes an acquire made before it (`DeliveryLeases` relies on storage
 * applying one lease's calls in the order they were made).
 */
export class RedisLeases implements LeaseStore {
  private queued = new Map<string, LeaseCall[]>()
  private flushing = false

  constructor(private readonly connection: RedisConnection) {}

  private key(name: string): string {
    return this.connection.raw(`lease:${name}`)
  }

  async acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.call(name, 'a', owner, String(ttlMs))) === 1
  }

  async release(name: string, owner: string): Promise<void> {
    await this.call(name, 'r', owner, '0')
  }

  async owner(name: string): Promise<string | null> {
    return ((await this.call(name, 'o', '', '0')) as string | null) ?? null
  }

  private call(name: string, operation: LeaseCall['operation'], owner: string, ttl: string): Promise<unknown> {
    const key = this.key(name)
    const group = this.connection.cluster ? hashTagOf(key) : ''
    return new Promise((resolve, reject) => {
      let calls = this.queued.get(group)
      if (!calls) this.queued.set(group, (calls = []))
      calls.push({ key, operation, owner, ttl, resolve, reject })
      if (this.flushing) return
      this.flushing = true
      // After the turn's synchronous work and its promise continuations: every call they make joins.
      process.nextTick(() => this.flush())
    })
  }

  private flush(): void {
    this.flushing = false
    const groups = this.queued
    this.queued = new Map()
    for (const calls of groups.values())
      for (let from = 0; from < calls.length; from += CALLS_PER_RUN)
        void this.run(calls.slice(from, from + CALLS_PER_RUN))
  }

  private async run(calls: LeaseCall[]): Promise<void> {
    const argv: string[] = []
    for (const { operation, owner, ttl } of calls) argv.push(operation, owner, ttl)
    try {
      const answers = (await evalScript(
        this.connection.client,
        LEASE_CALLS,
        calls.length,
        ...calls.map(({ key }) => key),
        ...argv,
      )) as unknown[]
      calls.forEach((call, index) => call.resolve(answers[index]))
    } catch (error) {
      for (const call of calls) call.reject(error)
    }
  }
}
