import { describe, expect, it } from 'vitest'
import { runServerOnFreePortUntilExit } from '../support/server'

/**
 * Issue 24: settings the service cannot use stop it at start with a message naming the setting
 * and the expected shape, and never echoing a secret: `TRUST_PROXY=true` (it believed whatever
 * X-Forwarded-For a client wrote) and a malformed `REDIS_CLUSTER_NODES` holding a password.
 */

/** Runs the built server until it exits by itself (killed after 20 s). */
const runUntilExit = async (env: Record<string, string>) =>
  runServerOnFreePortUntilExit({ ADVISORY_FEED_URL: 'off', ...env })

describe('start-up settings', () => {
  it('TRUST_PROXY=true is refused, saying to set a proxy count or CIDRs', async () => {
    const { code, output } = await runUntilExit({ TRUST_PROXY: 'true' })
    expect(code, output).toBe(1)
    expect(output).toMatch(/TRUST_PROXY: \W+true\W+ would believe any X-Forwarded-For .*number of reverse proxies/)
  }, 30_000)

  it('a malformed REDIS_CLUSTER_NODES is refused without echoing the password it holds', async () => {
    const { code, output } = await runUntilExit({ REDIS_CLUSTER_NODES: 'default:hunter2-secret@10.0.0.1:7000' })
    expect(code, output).toBe(1)
    expect(output).toMatch(/REDIS_CLUSTER_NODES: entry 1 of 1 is not host:port \(expected host:port,host:port/)
    expect(output).not.toContain('hunter2')
  }, 30_000)

  it('IDLE_SCAVENGE other than on/off is refused, naming the values it takes', async () => {
    const { code, output } = await runUntilExit({ IDLE_SCAVENGE: 'sometimes' })
    expect(code, output).toBe(1)
    expect(output).toMatch(/IDLE_SCAVENGE: expected \W+on\W+ or \W+off\W+, got \W+sometimes/)
  }, 30_000)
})
