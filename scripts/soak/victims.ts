import { createBackend, type Backend, type BackendOptions } from '../../storage'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import type { Cluster } from './cluster'
import type { Attempt, SoakReceiver } from './receiver'
import { NS, type SoakWebhook } from './setup'

/** Lease owners are `host:pid:random`. */
const pidOf = (owner: string | null) => (owner ? Number(owner.split(':')[1]) : NaN)

/**
 * Chooses whom the chaos loop kills, in turn: a random process; the process that delivered the
 * attempt the receiver has just acknowledged (killed between the sender getting its 2xx and
 * recording it: the at-least-once window); the process holding the lease of the next webhook in turn.
 */
export class VictimPicker {
  private readonly backend: Promise<Backend>
  private turn = 0

  constructor(
    private readonly cluster: Cluster,
    private readonly receiver: SoakReceiver,
    private readonly webhooks: SoakWebhook[],
    storage: BackendOptions,
  ) {
    this.backend = createBackend(storage)
  }

  async pick(): Promise<{ slot: number; why: string } | null> {
    const kind = this.turn++ % 3
    if (kind === 1) return this.justAcked()
    if (kind === 2) {
      const hook = this.webhooks[Math.floor(this.turn / 3) % this.webhooks.length]
      return this.leaseHolder(webhookKeys.webhookLease(NS, hook.id), `lease holder of ${hook.name}`)
    }
    return null
  }

  private async justAcked(): Promise<{ slot: number; why: string } | null> {
    const attempt = await new Promise<Attempt | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), 5_000)
      this.receiver.onAck = (acked) => {
        clearTimeout(timer)
        this.receiver.onAck = null
        resolve(acked)
      }
    })
    const hook = attempt && this.webhooks.find((h) => h.name === attempt.hook)
    if (!hook) return null
    return this.leaseHolder(
      webhookKeys.webhookLease(NS, hook.id),
      `sender of just-acknowledged ${attempt.deliveryId} (${hook.name})`,
    )
  }

  private async leaseHolder(lease: string, why: string): Promise<{ slot: number; why: string } | null> {
    const slot = this.cluster.slotOfPid(pidOf(await (await this.backend).leases.owner(lease)))
    return slot === null ? null : { slot, why }
  }

  async close(): Promise<void> {
    return (await this.backend).close()
  }
}
