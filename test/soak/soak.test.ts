import { describe, expect, it } from 'vitest'
import { defaultOptions } from '../../scripts/soak/args'
import { formatReport } from '../../scripts/soak/report'
import { runSoak } from '../../scripts/soak/soak'

/**
 * A short run of the soak runner (scripts/soak): three built servers on one Redis, the random
 * receiver, the producer (config changes and npm installs through the proxy) and two SIGKILLs.
 * Asserts the invariants only, never timings: everything delivered or reported dropped, order
 * kept, one delivery in flight per webhook, records and metrics agree, no crash, drain complete.
 */
describe('multi-process soak (short)', () => {
  it('keeps the delivery guarantees while server processes are SIGKILLed', { timeout: 600_000 }, async () => {
    const options = defaultOptions({
      durationMs: 50_000,
      // Kills at ~18-24 s and ~36-48 s: two within the run.
      killMinMs: 18_000,
      killMaxMs: 24_000,
      // Generous: on a loaded 2-core machine retries (1+2+4+8+16 s) and quarantine (5 s) take their time.
      drainTimeoutMs: 240_000,
      verbose: false,
    })
    const result = await runSoak(options)
    const report = formatReport(result)
    expect(result.violations, report).toEqual([])
    expect(result.drain.complete, report).toBe(true)
    expect(result.kills.total, report).toBeGreaterThanOrEqual(1)
    expect(result.kills.survived, report).toBe(result.kills.total)
    // The producer really produced every kind of event the soak is about.
    for (const type of ['config.firewall.updated', 'firewall.allowed', 'firewall.blocked'])
      expect(result.events.byFamily[type] ?? 0, report).toBeGreaterThan(0)
    expect(result.events.byFamily['audit.*'] ?? 0, report).toBeGreaterThan(0)
    for (const hook of result.hooks) {
      expect(hook.orderViolations, report).toEqual([])
      expect(hook.concurrent, report).toBe(0)
      expect(hook.deliveredDistinct, report).toBeGreaterThan(0)
    }
  })
})
