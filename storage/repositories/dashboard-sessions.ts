import type { Backend } from '../backend'
import { keys } from './keys'

/** What the server knows of a signed-in dashboard session; the token stays in the sealed cookie. */
export interface DashboardSessionRecord {
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
  constructor(private readonly backend: Backend) {}

  create(id: string, record: DashboardSessionRecord): Promise<void> {
    return this.backend.set(keys.dashboardSession(id), record)
  }

  /** The live record of `id`; null when unknown, signed out or expired (an expired one is removed). */
  async find(id: string, nowMs: number): Promise<DashboardSessionRecord | null> {
    const record = await this.backend.get<DashboardSessionRecord>(keys.dashboardSession(id))
    if (!record) return null
    if (!expired(record, nowMs)) return record
    await this.backend.delete(keys.dashboardSession(id))
    return null
  }

  delete(id: string): Promise<void> {
    return this.backend.delete(keys.dashboardSession(id))
  }

  /** Removes expired records (sessions nobody signed out of); returns how many. */
  async prune(nowMs: number): Promise<number> {
    const found = await this.backend.keys(keys.dashboardSessionPrefix)
    const records = await this.backend.getMany<DashboardSessionRecord>(found)
    const stale = found.filter((_, i) => records[i] !== null && expired(records[i]!, nowMs))
    await Promise.all(stale.map((key) => this.backend.delete(key)))
    return stale.length
  }
}
