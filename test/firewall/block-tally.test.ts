import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createServices, type Services } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import type { Principal } from '../../server/auth/principal'
import { blockSummary } from '../../server/firewall/block-summary'
import {
  addEntry,
  blockWindow,
  coverage,
  emptyTally,
  topBlocked,
  windowDays,
  type BlockTally,
} from '../../server/firewall/block-tally'
import type { FirewallLogEntry } from '../../server/firewall/log-query'
import { FirewallInput, type Firewall } from '../../server/firewall/schema'
import { createBackend } from '../../storage'

const NOW = Date.parse('2026-11-26T18:00:00Z')
const DAY = 86_400_000

let seq = 0
/** A decision log entry at `time`; blocked unless said otherwise. */
function decision(time: string, packageName = 'evil', blocked = true, ecosystem = 'npm'): FirewallLogEntry {
  return {
    id: `log-${seq++}`,
    time,
    outcome: blocked ? 'blocked' : 'allowed',
    blocked,
    firewall: 'web',
    firewallVersion: 1,
    executionPhase: 'download',
    ecosystem,
    packageName,
    version: '1.0.0',
    upstream: 'npmjs',
    rule: blocked ? 'no-evil' : undefined,
    user: 'alice',
    request: 'req-1',
    message: 'm',
  } as FirewallLogEntry
}

/** Feeds entries newest first, as the reader does; returns the tally and whether it ran to the end. */
function tallyOf(entries: FirewallLogEntry[], now = NOW): { tally: BlockTally; reachedWindowStart: boolean } {
  const tally = emptyTally(blockWindow(now, 30))
  const newestFirst = [...entries].sort((a, b) => b.time.localeCompare(a.time))
  for (const entry of newestFirst) if (!addEntry(tally, entry)) return { tally, reachedWindowStart: true }
  return { tally, reachedWindowStart: false }
}

describe('blocks per day (pure)', () => {
  it('is 30 whole UTC days ending with today', () => {
    const window = blockWindow(NOW, 30)
    const days = windowDays(window)
    expect(days).toHaveLength(30)
    expect(days[0]).toBe('2026-10-28T00:00:00.000Z')
    expect(days[29]).toBe('2026-11-26T00:00:00.000Z')
  })

  it('buckets blocks by UTC day, at the edges of a day too, and skips allowed decisions', () => {
    const { tally } = tallyOf([
      decision('2026-11-26T00:00:00.000Z'),
      decision('2026-11-26T17:59:59.999Z'),
      decision('2026-11-25T23:59:59.999Z'),
      decision('2026-10-28T00:00:00.000Z'),
      decision('2026-11-26T10:00:00.000Z', 'fine', false),
    ])
    expect(tally.perDay[29]).toBe(2)
    expect(tally.perDay[28]).toBe(1)
    expect(tally.perDay[0]).toBe(1)
    expect(tally.perDay.reduce((a, b) => a + b, 0)).toBe(4)
    expect(tally.scanned).toBe(5)
  })

  it('stops at the first entry before the window and leaves it uncounted', () => {
    const { tally, reachedWindowStart } = tallyOf([
      decision('2026-11-01T00:00:00.000Z'),
      decision('2026-10-27T23:59:59.999Z'),
    ])
    expect(reachedWindowStart).toBe(true)
    expect(tally.perDay.reduce((a, b) => a + b, 0)).toBe(1)
    expect(coverage(tally, { kind: 'window' })).toEqual({ complete: true, from: '2026-10-28T00:00:00.000Z' })
  })

  it('counts per package and ecosystem, keeping the newest block', () => {
    const { tally } = tallyOf([
      decision('2026-11-20T00:00:00.000Z', 'evil'),
      decision('2026-11-21T00:00:00.000Z', 'evil'),
      decision('2026-11-22T00:00:00.000Z', 'evil', true, 'pypi'),
    ])
    const npm = tally.packages.get('npm\u0000evil')
    expect(npm).toMatchObject({ count: 2, lastBlockedAt: '2026-11-21T00:00:00.000Z', rule: 'no-evil' })
    expect(tally.packages.get('pypi\u0000evil')?.count).toBe(1)
  })

  it('tells a log trimmed inside the window (LOG_RETENTION shorter than it) from a young or idle one', () => {
    const { tally } = tallyOf([decision('2026-11-20T06:00:00.000Z')])
    // LOG_RETENTION 30d: nothing inside the window can have been trimmed, so days before the first entry had none.
    expect(coverage(tally, { kind: 'log_start', retainedSince: NOW - 30 * DAY })).toEqual({
      complete: true,
      from: '2026-10-28T00:00:00.000Z',
    })
    // LOG_RETENTION 7d: the days before the horizon may have lost decisions.
    expect(coverage(tally, { kind: 'log_start', retainedSince: NOW - 7 * DAY })).toEqual({
      complete: false,
      from: '2026-11-19T18:00:00.000Z',
      reason: 'retention',
    })
    expect(coverage(tally, { kind: 'scan_limit' })).toEqual({
      complete: false,
      from: '2026-11-20T06:00:00.000Z',
      reason: 'scan_limit',
    })
  })

  it('ranks the most blocked packages across firewalls, most first, then newest', () => {
    const web = tallyOf([decision('2026-11-20T00:00:00.000Z', 'a'), decision('2026-11-21T00:00:00.000Z', 'b')]).tally
    const ci = tallyOf([decision('2026-11-22T00:00:00.000Z', 'a'), decision('2026-11-23T00:00:00.000Z', 'c')]).tally
    const top = topBlocked(
      [
        { firewall: 'web', tally: web },
        { firewall: 'ci', tally: ci },
      ],
      2,
    )
    expect(top.map((p) => [p.packageName, p.count, p.firewalls])).toEqual([
      ['a', 2, ['web', 'ci']],
      ['c', 1, ['ci']],
    ])
    expect(top[0].lastBlockedAt).toBe('2026-11-22T00:00:00.000Z')
  })
})

describe('block summary over a real firewall log', () => {
  const owner: Principal = {
    type: 'user',
    id: 'owner',
    namespace: 'acme',
    tokenId: 'tok-1',
    tokenIdentifier: 'ti-1',
    teams: [],
    grants: [],
    owner: true,
  }

  async function seeded(entries: FirewallLogEntry[]): Promise<Services> {
    const backend = await createBackend({ dataDir: mkdtempSync(join(tmpdir(), 'pf-blocks-')) })
    const services = createServices(backend, { config: configFromEnv({}), clock: { now: () => NOW } })
    await services.namespaces.create({ id: 'acme', owner: 'owner', createdAt: new Date(NOW).toISOString() })
    const input = FirewallInput.parse({ id: 'web' })
    const next: Firewall = { ...input, id: 'web', name: 'web', version: 0, updatedAt: '' }
    await services.firewalls.mutate('acme', 'web', { userId: 'owner' }, new Date(NOW).toISOString(), () => ({
      next,
      summary: 'test',
      result: () => undefined,
    }))
    // Oldest first, as the registry appends them.
    await services.firewallLog.appendWithoutEvents('acme', 'web', entries)
    return services
  }

  it('reads back to the window start and counts the blocks in it', async () => {
    const services = await seeded([
      decision('2026-10-01T00:00:00.000Z'),
      decision('2026-11-25T00:00:00.000Z'),
      decision('2026-11-26T01:00:00.000Z'),
      decision('2026-11-26T02:00:00.000Z', 'ok', false),
    ])
    const { tally, coverage } = await blockSummary(
      { services, ns: 'acme', principal: owner, meta: {} as never },
      'web',
      {
        retentionMs: 30 * DAY,
      },
    )
    expect(tally.perDay.slice(-2)).toEqual([1, 1])
    expect(coverage.complete).toBe(true)
  })

  it('stops at its scan bound and says the counts are partial', async () => {
    const services = await seeded(
      Array.from({ length: 12 }, (_, i) => decision(`2026-11-${String(10 + i).padStart(2, '0')}T00:00:00.000Z`)),
    )
    const ctx = { services, ns: 'acme', principal: owner, meta: {} as never }
    const { tally, coverage } = await blockSummary(ctx, 'web', { scanLimit: 5, retentionMs: 30 * DAY })
    expect(tally.perDay.reduce((a, b) => a + b, 0)).toBe(5)
    expect(coverage).toEqual({ complete: false, from: '2026-11-17T00:00:00.000Z', reason: 'scan_limit' })
  })
})
