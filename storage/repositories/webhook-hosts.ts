import type { Backend } from '../backend'
import { mapOf, recordOf } from '../own'
import { webhookKeys as keys } from './webhook-keys'

/**
 * The processes delivering webhooks (their lease owner ids), each until its last heartbeat plus
 * a lease time: the delivery hosts share the webhooks evenly by their number. One global
 * document `{ owner: until }` (ms epoch), written by each host once per pass (a few seconds),
 * so a read-modify-write of it costs nothing next to the leases themselves.
 */
export class WebhookHostRepository {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  /**
   * Notes `owner` as delivering until `now + ttlMs`, forgets hosts whose time passed, and returns
   * how many are delivering now, `owner` included.
   */
  heartbeat(owner: string, ttlMs: number, now: number): Promise<number> {
    return this.backend.keyValue.transact([keys.hosts()], (values) => {
      const hosts = new Map([...mapOf<number>(values.get(keys.hosts()))].filter(([, until]) => until > now))
      hosts.set(owner, now + ttlMs)
      return { writes: { set: { [keys.hosts()]: recordOf(hosts) } }, result: hosts.size }
    })
  }

  /** `owner` stops delivering (graceful stop): the others count without it at once. */
  leave(owner: string): Promise<void> {
    return this.backend.keyValue.transact([keys.hosts()], (values) => {
      const hosts = mapOf<number>(values.get(keys.hosts()))
      if (!hosts.delete(owner)) return { writes: {}, result: undefined }
      return { writes: { set: { [keys.hosts()]: recordOf(hosts) } }, result: undefined }
    })
  }
}
