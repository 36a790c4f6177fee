import type { Backend } from '../backend'
import { keys } from './keys'

/** What the server knows of a signed-in dashboard session; the token stays in the sealed cookie. */
interface DashboardSessionRecord {
  ns: string
  createdAt: string
  expiresAt: string
}

const expired = (record: DashboardSessionRecord, nowMs: number) => !(Date.parse(record.expiresAt) > nowMs)

/**
 * Dashboard sessions by id. A session is valid while its record exists and has not expired, so
 * deleting the record (sign-out) ends it in every process sharing the storage, whatever copy of
 * the cookie is still around.
 */
export class DashboardSessionRepository {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  create(id: string, record: DashboardSessionRecord): Promise<void> {
    return this.backend.keyValue.set(keys.dashboardSession(id), record)
  }

  /** The live record of `id`; null when unknown, signed out or expired (an expired one is removed). */
  async find(id: string, nowMs: number): Promise<DashboardSessionRecord | null> {
    const record = await this.backend.keyValue.get<DashboardSessionRecord>(keys.dashboardSession(id))
    if (!record) return null
    if (!expired(record, nowMs)) return record
    await this.backend.keyValue.delete(keys.dashboardSession(id))
    return null
  }

  delete(id: string): Promise<void> {
    return this.backend.keyValue.delete(keys.dashboardSession(id))
  }

  /**
   * The stored sealing secret, created by `create` when absent, in one transaction: two processes
   * starting together agree on one. `open` and `create` work on the stored (sealed) form.
   */
  sessionSecret(open: (stored: string) => string, create: () => { stored: string; secret: string }): Promise<string> {
    const key = keys.dashboardSessionSecret
    return this.backend.keyValue.transact([key], (values) => {
      const existing = values.get(key) as string | null
      if (existing) return { writes: {}, result: open(existing) }
      const { stored, secret } = create()
      return { writes: { set: { [key]: stored } }, result: secret }
    })
  }

  /** Removes expired records (sessions nobody signed out of); returns how many. */
  async prune(nowMs: number): Promise<number> {
    const found = await this.backend.keyValue.keys(keys.dashboardSessionPrefix)
    const records = await this.backend.keyValue.getMany<DashboardSessionRecord>(found)
    const stale = found.filter((_, i) => records[i] !== null && expired(records[i]!, nowMs))
    await Promise.all(stale.map((key) => this.backend.keyValue.delete(key)))
    return stale.length
  }
}
