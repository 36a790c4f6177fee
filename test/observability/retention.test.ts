import { afterEach, describe, expect, it } from 'vitest'
import { createServices, type Services } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { FirewallInput, type Firewall } from '../../server/firewall/schema'
import { RetentionWorker, retainedLogs, retentionSettings } from '../../server/observability/retention'
import { keys } from '../../storage/repositories/keys'
import { RetainedLogRepository } from '../../storage/repositories/retained-logs'
import { createBackend, type Backend } from '../../storage'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import { redisUrl, uniquePrefix } from '../support/redis'

const DAY = 86_400_000
const RETENTION = 30 * DAY

/** A clock the test sets; the worker reads nothing else for its cutoff. */
const settable = (at: number) => ({
  at,
  now() {
    return this.at
  },
})

async function putFirewall(services: Services, ns: string, id: string, remove = false): Promise<void> {
  const input = FirewallInput.parse({ id })
  const next: Firewall | null = remove ? null : { ...input, id, name: id, version: 0, updatedAt: '' }
  await services.firewalls.mutate(ns, id, { userId: 'owner' }, new Date().toISOString(), () => ({
    next,
    summary: 'test',
    result: () => undefined,
  }))
}

/** Two namespaces, three firewalls (one deleted): the retained logs of a small installation. */
async function seed(backend: Backend): Promise<Services> {
  const services = createServices(backend, { config: configFromEnv({}) })
  for (const ns of ['acme', 'beta'])
    await services.namespaces.create({ id: ns, owner: 'owner', createdAt: new Date().toISOString() })
  await putFirewall(services, 'acme', 'web')
  await putFirewall(services, 'acme', 'old')
  await putFirewall(services, 'acme', 'old', true)
  await putFirewall(services, 'beta', 'ci')
  return services
}

const LOGS = [
  keys.eventLog('acme'),
  keys.eventLog('beta'),
  keys.auditLog('acme'),
  keys.auditLog('beta'),
  keys.firewallLog('acme', 'web'),
  keys.firewallLog('acme', 'old'),
  keys.firewallLog('beta', 'ci'),
]
const append = (backend: Backend, n: number) =>
  Promise.all(
    LOGS.map((log) =>
      backend.logs.append(
        log,
        Array.from({ length: n }, (_, i) => ({ i })),
      ),
    ),
  )
const lengths = async (backend: Backend) => Promise.all(LOGS.map((log) => backend.logs.length(log)))

/** Returns once the wall clock has moved past `ms`, so entries appended next carry a later time. */
function clockPast(ms: number): number {
  while (Date.now() <= ms) {
    // busy for at most a millisecond or two: entry times have millisecond resolution
  }
  return Date.now()
}

const open: Backend[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((backend) => backend.close()))
})

describe('retention settings', () => {
  it('defaults to 30d every minute and reads LOG_RETENTION / LOG_RETENTION_INTERVAL', () => {
    expect(retentionSettings({})).toEqual({ retentionMs: RETENTION, intervalMs: 60_000 })
    expect(retentionSettings({ LOG_RETENTION: '1h', LOG_RETENTION_INTERVAL: '10s' })).toEqual({
      retentionMs: 3_600_000,
      intervalMs: 10_000,
    })
    expect(() => retentionSettings({ LOG_RETENTION: 'forever' })).toThrow(/invalid duration/)
  })
})

describe.each(BACKEND_KINDS)('retention worker on %s', (kind) => {
  it('covers the event log, every audit log and every firewall log, deleted firewalls included', async () => {
    const backend = await makeBackend(kind)
    open.push(backend)
    await seed(backend)
    expect((await retainedLogs(new RetainedLogRepository(backend))).map((l) => l.log).sort()).toEqual([...LOGS].sort())
  })

  it('removes exactly the entries older than the retention on the injected clock', async () => {
    const backend = await makeBackend(kind)
    open.push(backend)
    await seed(backend)
    await append(backend, 5)
    const boundary = clockPast(Date.now())
    await append(backend, 3)
    const clock = settable(boundary - 1)
    const worker = new RetentionWorker({
      logs: new RetainedLogRepository(backend),
      clock,
      retentionMs: RETENTION,
      intervalMs: 60_000,
      owner: 'w1',
    })

    // Fresh entries survive a pass at the present.
    expect((await worker.runOnce())!.removed).toEqual({ event: 0, audit: 0, firewall: 0 })
    // 30 days on, with the cutoff exactly at the second batch: the seed and the first batch go.
    clock.at = boundary + RETENTION
    const report = await worker.runOnce()
    expect(report).toMatchObject({ cutoff: boundary, logs: LOGS.length })
    expect(report!.removed).toEqual({ event: 10, audit: 10, firewall: 15 })
    expect(await lengths(backend)).toEqual(LOGS.map(() => 3))
    // And everything once the second batch is older than the retention too.
    clock.at = boundary + RETENTION + DAY
    await worker.runOnce()
    expect(await lengths(backend)).toEqual(LOGS.map(() => 0))
  })

  it('runs at start and on every tick of its timer, and stops cleanly', async () => {
    const backend = await makeBackend(kind)
    open.push(backend)
    await seed(backend)
    let tick: (() => void) | null = null
    let cancelled = false
    const clock = settable(Date.now() + 2 * RETENTION)
    const worker = new RetentionWorker({
      logs: new RetainedLogRepository(backend),
      clock,
      retentionMs: RETENTION,
      intervalMs: 60_000,
      owner: 'w1',
      every: (run) => ((tick = run), () => (cancelled = true)),
    })
    await worker.start()
    expect(await lengths(backend)).toEqual(LOGS.map(() => 0))
    await append(backend, 2)
    tick!()
    await worker.stop() // waits for the pass the tick started
    expect(await lengths(backend)).toEqual(LOGS.map(() => 0))
    expect(cancelled).toBe(true)
  })
})

describe('retention with several processes on one Redis', () => {
  it('lets exactly one holder of the lease trim, and another take over once it stops', async () => {
    const url = await redisUrl()
    const prefix = uniquePrefix('retention')
    // Two backends on one prefix: what two server processes see.
    const [one, two] = await Promise.all([
      createBackend({ redisUrl: url, redisPrefix: prefix }),
      createBackend({ redisUrl: url, redisPrefix: prefix }),
    ])
    open.push(one, two)
    await seed(one)
    const clock = settable(Date.now() + 2 * RETENTION)
    const first = new RetentionWorker({
      logs: new RetainedLogRepository(one),
      clock,
      retentionMs: RETENTION,
      intervalMs: 60_000,
      owner: 'process-1',
    })
    const second = new RetentionWorker({
      logs: new RetainedLogRepository(two),
      clock,
      retentionMs: RETENTION,
      intervalMs: 60_000,
      owner: 'process-2',
    })
    const reports = await Promise.all([first.runOnce(), second.runOnce()])
    expect(reports.filter((r) => r !== null)).toHaveLength(1)
    const holder = reports[0] ? first : second
    const other = reports[0] ? second : first
    expect(await other.runOnce()).toBeNull()
    expect(await holder.runOnce()).not.toBeNull()
    await holder.stop()
    expect(await other.runOnce()).not.toBeNull()
  })
})
