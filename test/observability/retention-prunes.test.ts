import { afterEach, describe, expect, it } from 'vitest'
import { createServices } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { RetentionWorker } from '../../server/observability/retention'
import { retentionPrunes } from '../../server/observability/retention-prunes'
import { keys } from '../../storage/repositories/keys'
import type { Backend } from '../../storage'
import { BACKEND_KINDS, makeBackend } from '../support/backends'

const NOW = Date.UTC(2026, 10, 26, 12)
const iso = (ms: number) => new Date(ms).toISOString()

const open: Backend[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((backend) => backend.close()))
})

describe.each(BACKEND_KINDS)('the retention pass sweeps dashboard sessions (%s)', (kind) => {
  it('removes every session record past its expiry, at the bound exactly, and keeps the live ones', async () => {
    const backend = await makeBackend(kind)
    open.push(backend)
    const services = createServices(backend, { config: configFromEnv({}) })
    const sessions = services.dashboardSessions
    const record = (expiresAt: number) => ({
      ns: 'acme',
      createdAt: iso(expiresAt - 43_200_000),
      expiresAt: iso(expiresAt),
    })
    // Sessions nobody signed out of and nobody revisits: only a sweep removes them.
    for (let i = 0; i < 50; i++) await sessions.create(`gone-${i}`, record(NOW - 1 - i * 60_000))
    await sessions.create('at-bound', record(NOW))
    await sessions.create('live', record(NOW + 1))
    const clock = { now: () => NOW }
    const worker = new RetentionWorker({
      logs: services.retainedLogs,
      clock,
      retentionMs: 30 * 86_400_000,
      intervalMs: 60_000,
      owner: 'sweeper',
      prune: retentionPrunes(services, 30 * 86_400_000),
    })

    const report = await worker.runOnce()
    expect(report!.pruned.dashboardSessions).toBe(51)
    expect(await backend.keyValue.keys(keys.dashboardSessionPrefix)).toEqual([keys.dashboardSession('live')])
    expect(await sessions.find('live', NOW)).not.toBeNull()
    // The next pass finds nothing more to remove.
    expect((await worker.runOnce())!.pruned.dashboardSessions).toBe(0)
  })
})
