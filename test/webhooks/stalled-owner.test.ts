import { afterEach, describe, expect, it } from 'vitest'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import type { Receiver } from './support/receiver'
import { waitFor, type BuiltServer } from './support/built-server'
import { RedisCluster } from './support/cluster'

/** The process id inside a lease owner (`host:pid:random`). */
const pidOf = (owner: string | null) => Number(owner?.split(':')[1])

/** Event ids received, counting each webhook-id once (what a deduplicating receiver keeps). */
function deduplicated(receiver: Receiver): string[] {
  const seen = new Map<string, string[]>()
  for (const receipt of receiver.receipts)
    seen.set(
      String(receipt.headers['webhook-id']),
      receipt.json.events.map((e) => e.id),
    )
  return [...seen.values()].flat()
}

// A 1 s lease and a 4 s attempt timeout: a lease that only covered the renewals would lapse
// within a second of its owner stalling, long before the owner's attempt ends.
const ENV = { WEBHOOK_LEASE: '1s', WEBHOOK_ATTEMPT_TIMEOUT: '4s', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' }

describe('a webhook owner that stalls or dies during an attempt', () => {
  let cluster: RedisCluster | null = null
  afterEach(async () => {
    for (const server of cluster?.servers ?? []) server.process.kill('SIGCONT')
    await cluster?.close()
    cluster = null
  })

  /** Two servers, one webhook delivered once; returns the receiver, the lease owner and the other server. */
  async function twoServers(label: string) {
    cluster = await RedisCluster.create(label, ENV)
    const servers = [await cluster.start(), await cluster.start()]
    const { receiver, webhook } = await cluster.subscribe(servers[1], 'stall')
    const first = await cluster.append(1)
    await waitFor(() => receiver.receipts.length >= 1 && receiver.open === 0, 10_000, 'the first delivery')
    const lease = webhookKeys.webhookLease('default', webhook.id)
    const ownerPid = pidOf(await cluster.backend.leases.owner(lease))
    const owner = servers.find((server) => server.pid === ownerPid) as BuiltServer
    const other = servers.find((server) => server.pid !== ownerPid) as BuiltServer
    expect(owner).toBeDefined()
    return { receiver, first, owner, other, lease }
  }

  it('no other process sends while the stalled owner’s request is open (SIGSTOP for twice the lease)', async () => {
    const { receiver, first, owner, lease } = await twoServers('wh-stall')
    // The receiver holds the next request open for 3 s: the owner's attempt is in flight throughout.
    receiver.reply = (_receipt, index) => (index === 1 ? { status: 200, delayMs: 3_000 } : { status: 200 })
    const second = await cluster!.append(1)
    await waitFor(() => receiver.receipts.length >= 2, 10_000, 'the attempt to hold open')

    owner.process.kill('SIGSTOP')
    const stoppedAt = Date.now()
    // The stall: 2 s (twice the lease), cut short only if another process sends meanwhile.
    await waitFor(() => receiver.receipts.length >= 3 || Date.now() - stoppedAt >= 2_000, 10_000, 'the stall')
    owner.process.kill('SIGCONT')

    await waitFor(() => deduplicated(receiver).length >= 2 && receiver.open === 0, 15_000, 'both events delivered')
    expect(receiver.overlaps).toBe(0)
    expect(deduplicated(receiver)).toEqual([...first, ...second])
    // The attempt's lease covered the stall: the owner kept its webhook.
    expect(pidOf(await cluster!.backend.leases.owner(lease))).toBe(owner.pid)
  })

  it('after a SIGKILL mid-attempt another process takes over once the attempt’s time (and the lease) has passed', async () => {
    const { receiver, first, owner, other, lease } = await twoServers('wh-kill-attempt')
    // The next request is never answered: the owner dies with it open.
    receiver.reply = (_receipt, index) => (index === 1 ? { hang: true } : { status: 200 })
    const second = await cluster!.append(1)
    await waitFor(() => receiver.receipts.length >= 2, 10_000, 'the attempt to die in')
    const sentAt = receiver.receipts[1].at
    await owner.kill('SIGKILL')

    await waitFor(() => receiver.receipts.length >= 3, 30_000, 'the other process sending the batch again')
    const failoverMs = receiver.receipts[2].at - sentAt
    // The dead owner had extended its lease for the attempt's timeout plus one lease time before sending.
    expect(failoverMs).toBeGreaterThanOrEqual(4_000)
    expect(receiver.receipts[2].headers['webhook-id']).toBe(receiver.receipts[1].headers['webhook-id'])
    expect(pidOf(await cluster!.backend.leases.owner(lease))).toBe(other.pid)
    await waitFor(() => deduplicated(receiver).length >= 2, 10_000, 'both events delivered')
    expect(deduplicated(receiver)).toEqual([...first, ...second])
    expect(receiver.overlaps).toBe(0)
    process.stdout.write(`failover after SIGKILL mid-attempt: ${failoverMs} ms after the attempt arrived\n`)
  })
})
