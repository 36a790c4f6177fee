import { Agent, fetch as undiciFetch } from 'undici'
import type { Backend } from '../../../storage'
import { makeEvent } from '../../../server/events/factory'
import { systemClock } from '../../../server/common/clock'
import { backendOfEnv, sharedStorageEnv, type SharedStorage } from '../../support/backends'
import { Receiver } from './receiver'
import { bootstrapToken, startBuiltServer, type BuiltServer } from './built-server'

/**
 * The multi-process suites' world: built servers sharing one Redis (or Redis Cluster) prefix, a backend on the same
 * storage (to append events as another producer and to read leases and snapshots), a verifying
 * receiver, and clean-up that kills whatever is still running.
 */
export class RedisCluster {
  readonly servers: BuiltServer[] = []
  receiver: Receiver | null = null

  private constructor(
    readonly env: Record<string, string>,
    readonly backend: Backend,
  ) {}

  static async create(
    label: string,
    extraEnv: Record<string, string> = {},
    storage: SharedStorage = 'redis',
  ): Promise<RedisCluster> {
    const env = {
      ...(await sharedStorageEnv(storage, label)),
      BOOTSTRAP_TOKEN: bootstrapToken(),
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      WEBHOOK_LEASE: '2s',
      ...extraEnv,
    }
    return new RedisCluster(env, await backendOfEnv(env))
  }

  async start(): Promise<BuiltServer> {
    const server = await startBuiltServer(this.env)
    this.servers.push(server)
    return server
  }

  /** Starts the receiver (validating against the served schema) and subscribes it through `server`'s API. */
  async subscribe(
    server: BuiltServer,
    name: string,
  ): Promise<{ receiver: Receiver; webhook: { id: string; secret: string } }> {
    // The schema comes over its own connection, closed at once: starting the receiver can take over
    // 5 s on a loaded machine, and the POST below would race the server closing that idle socket.
    const schemaAgent = new Agent()
    const schema = await (
      await undiciFetch(`${server.url}/schemas/webhook-events-v1.json`, { dispatcher: schemaAgent })
    ).json()
    await schemaAgent.close()
    const receiver = await new Receiver().start(schema as never)
    this.receiver = receiver
    const created = await fetch(`${server.url}/v1/default/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.env.BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, url: receiver.url, eventTypes: ['audit.test.*'] }),
    })
    if (created.status !== 201) throw new Error(`creating the webhook failed: ${created.status}`)
    const webhook = await created.json()
    receiver.secrets = [webhook.secret]
    return { receiver, webhook }
  }

  /** Events appended to the shared log by "another producer", as the service's own writers do. */
  async append(count: number): Promise<string[]> {
    const events = Array.from({ length: count }, () =>
      makeEvent(systemClock, 'default', 'audit.test.ping', {
        action: 'test.ping',
        outcome: 'success',
        statusCode: 200,
      }),
    )
    await this.backend.keyValue.transact([], () => ({ writes: { events }, result: undefined }))
    return events.map((event) => event.id)
  }

  async close(): Promise<void> {
    for (const server of this.servers) await server.kill('SIGKILL')
    await this.receiver?.stop()
    await this.backend.close()
  }
}
