import { randomBytes } from 'node:crypto'
import { mkdtempSync, watch } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createBackend } from '../../storage'
import { keys } from '../../storage/repositories/keys'
import type { StoredEvent } from '../../storage/model/events'
import { apiClient, startServer, type RunningServer } from '../support/server'

/**
 * The built service on fs storage, killed (SIGKILL) while firewall changes are being written, then
 * started again on the same directory: every version it stored is whole, with its history entry
 * and its event (storage/local/journal.ts finishes what the kill cut, before the service serves).
 */

const NS = 'default'
const FIREWALLS = 6
const token = `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`
const dataDir = mkdtempSync(join(tmpdir(), 'pf-fs-kill-'))
const env = { DATA_DIR: dataDir, BOOTSTRAP_TOKEN: token, API_RATE_LIMIT: 'off' }
let server: RunningServer | undefined

afterAll(async () => {
  await server?.stop('SIGKILL')
})

/** PUT of one rule of firewall `fw`, a pattern no other call sent (each call is a new version). */
function changeRule(url: string, fw: number, k: number): Promise<Response> {
  return fetch(`${url}/v1/${NS}/config/fw-${fw}/rules/r${k % 5}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      executionPhase: 'download',
      selector: { function: { name: 'packageName', patterns: [`x-${fw}-${k}-*`] } },
      ruleEffect: { block: true, log: true },
    }),
  })
}

describe('fs storage: the service killed while writing firewall changes', () => {
  it(
    'starts again with every stored version whole: its history entry and its event',
    { timeout: 180_000 },
    async () => {
      server = await startServer(env)
      const api = apiClient(server.url, token)
      for (let fw = 0; fw < FIREWALLS; fw++) {
        const created = await api('PUT', `/v1/${NS}/config/fw-${fw}`, {
          ecosystem: 'npm',
          upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
        })
        expect(created.status).toBe(201)
      }

      // One writer per firewall, each with a call in flight at all times, until the process dies.
      const running = server
      let answered = 0
      let killed = false
      let reachedTarget!: () => void
      const target = new Promise<void>((resolve) => (reachedTarget = resolve))
      const writers = Array.from({ length: FIREWALLS }, async (_, fw) => {
        for (let k = 0; ; k++) {
          try {
            const response = await changeRule(running.url, fw, k)
            await response.arrayBuffer()
            expect(response.status).toBeLessThan(300)
          } catch (error) {
            if (killed) return
            throw new Error(`${(error as Error).message}; the service printed:\n${running.output()}`, { cause: error })
          }
          if (++answered === 150) reachedTarget()
        }
      })
      await target
      // Killed the moment a history entry lands: its change's event is written after it, so the
      // kill falls inside a change as often as the file watch is quicker than the next write.
      const historyDir = join(dataDir, 'ns', `{${NS}}`, 'fw-history', 'fw-0')
      await new Promise<void>((resolve) => {
        const watcher = watch(historyDir, () => {
          watcher.close()
          resolve()
        })
      })
      killed = true
      running.process.kill('SIGKILL')
      await running.stop()
      await Promise.all(writers)

      server = await startServer(env)
      const restarted = apiClient(server.url, token)
      const versions = new Map<string, number>()
      for (let fw = 0; fw < FIREWALLS; fw++) {
        const firewall = await restarted('GET', `/v1/${NS}/config/fw-${fw}`)
        expect(firewall.status).toBe(200)
        const version = (firewall.body as { version: number }).version
        versions.set(`fw-${fw}`, version)
        const history = await restarted('GET', `/v1/${NS}/config/fw-${fw}/history`)
        expect((history.body as { version: number }[]).map((entry) => entry.version)).toEqual(
          Array.from({ length: version }, (_, i) => version - i),
        )
      }
      expect([...versions.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(150)
      await server.stop()
      server = undefined

      // Every version's event is in the namespace's event log, once.
      const backend = await createBackend({ dataDir })
      const events = await backend.logs.range<StoredEvent>(keys.eventLog(NS), { limit: 100_000 })
      await backend.close()
      const logged = events
        .map((entry) => entry.value)
        .filter((event) => event.type.startsWith('config.firewall.'))
        .map((event) => `${event.data.firewall}@${event.data.version}`)
      const expected = [...versions].flatMap(([fw, version]) =>
        Array.from({ length: version }, (_, i) => `${fw}@${i + 1}`),
      )
      expect([...logged].sort()).toEqual([...expected].sort())
    },
  )
})
