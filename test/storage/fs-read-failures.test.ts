import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, type Driver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBackend, LocalBackend } from '../../storage'
import { keys } from '../../storage/repositories/keys'
import { StorageFailure } from '../../storage/storage-failure'
import { concurrencyLimit } from '../../storage/concurrency-limit'
import { toProblem } from '../../server/http/problem'
import { apiClient, startServer, type RunningServer } from '../support/server'

/**
 * Issue 24, finding 6: on fs storage, listing a webhook's deliveries read ~1,800 files at once;
 * past the descriptor limit unstorage's fs driver handed each `EMFILE` error object back as the
 * stored value (`TypeError ... reading 'id'`, a 500), and every other request failed meanwhile.
 */

const emfile = () => Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' })

/** A memory driver whose reads of `failing` keys answer the way unstorage's fs helpers do. */
function failingDriver(failing: (key: string) => boolean, as: 'value' | 'rejection'): Driver {
  const inner = memoryDriver()
  const fail = (key: string, read: () => unknown) => {
    if (!failing(key)) return read()
    return as === 'value' ? emfile() : Promise.reject(emfile())
  }
  return {
    ...inner,
    getItem: (key, options) => fail(key, () => inner.getItem(key, options)),
    getItemRaw: (key, options) => fail(key, () => inner.getItemRaw!(key, options)),
  } as Driver
}

describe('a failed storage read', () => {
  for (const as of ['value', 'rejection'] as const) {
    it(`is an error, never a value (driver reports it as a ${as})`, async () => {
      const backend = new LocalBackend(createStorage({ driver: failingDriver((key) => key.endsWith('bad'), as) }))
      await backend.keyValue.set('good', { id: 'g' })
      await backend.keyValue.set('bad', { id: 'b' })
      await expect(backend.keyValue.get('good')).resolves.toEqual({ id: 'g' })
      await expect(backend.keyValue.get('bad')).rejects.toBeInstanceOf(StorageFailure)
      await expect(backend.keyValue.getMany(['good', 'bad'])).rejects.toThrow(/storage read failed \(EMFILE\)/)
      await expect(backend.keyValue.getBytes('bad')).rejects.toBeInstanceOf(StorageFailure)
    })
  }

  it('fails a log page as a whole', async () => {
    let failing = false
    const backend = new LocalBackend(createStorage({ driver: failingDriver(() => failing, 'value') }))
    await backend.logs.append('l', [{ id: 1 }, { id: 2 }, { id: 3 }])
    failing = true
    await expect(backend.logs.range('l', { limit: 10 })).rejects.toBeInstanceOf(StorageFailure)
    failing = false
    expect((await backend.logs.range<{ id: number }>('l', { limit: 10 })).map((entry) => entry.value.id)).toEqual([
      1, 2, 3,
    ])
  })

  it('becomes a 503 storage_unavailable problem with Retry-After', () => {
    const { problem, headers } = toProblem(new StorageFailure('read', 'EMFILE'))
    expect(problem).toMatchObject({ status: 503, code: 'storage_unavailable' })
    expect(problem.detail).not.toMatch(/EMFILE|\//)
    expect(Number(headers['retry-after'])).toBeGreaterThan(0)
  })
})

describe('the concurrency limit', () => {
  it('runs at most `max` tasks at once, all of them in the end', async () => {
    const limit = concurrencyLimit(3)
    let running = 0
    let peak = 0
    const gates: (() => void)[] = []
    const results = Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        limit(async () => {
          running++
          peak = Math.max(peak, running)
          await new Promise<void>((resolve) => gates.push(resolve))
          running--
          return i
        }),
      ),
    )
    // Release the tasks one by one as they start.
    while (gates.length || running) {
      await new Promise((resolve) => setImmediate(resolve))
      gates.shift()?.()
    }
    expect(await results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(peak).toBe(3)
  })

  it('frees the slot of a failed task', async () => {
    const limit = concurrencyLimit(1)
    await expect(limit(() => Promise.reject(new Error('x')))).rejects.toThrow('x')
    await expect(limit(async () => 'next')).resolves.toBe('next')
  })
})

const TOKEN = 'fwp_fsDescriptorsOwnerToken0123456789abcd'
const SEEDED = 1_200

describe('fs storage in a process short of file descriptors (ulimit -n 160)', () => {
  let server: RunningServer
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pf-fds-'))
    // A first start creates the namespace; the audit log is then filled while the service is down.
    const first = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_TOKEN: TOKEN })
    await first.stop()
    const backend = await createBackend({ dataDir })
    const time = new Date().toISOString()
    await backend.logs.append(
      keys.auditLog('default'),
      Array.from({ length: SEEDED }, (_, i) => ({
        id: `aud_seed${i}`,
        time,
        action: 'seed.entry',
        outcome: 'success',
        statusCode: 200,
        resourceId: `r${i}`,
      })),
    )
    await backend.close()
    server = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_TOKEN: TOKEN }, { fileLimit: 160 })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('reads a page of 1,000 log entries whole, and other calls keep working meanwhile', async () => {
    const api = apiClient(server.url, TOKEN)
    const [page, ...others] = await Promise.all([
      api('GET', '/v1/default/audit?limit=1000&action=seed.entry'),
      api('GET', '/v1/default/me'),
      fetch(`${server.url}/healthz`).then((response) => ({ status: response.status })),
      api('GET', '/v1/default/config'),
    ])
    expect(page.status, JSON.stringify(page.body).slice(0, 300)).toBe(200)
    expect(page.body).toHaveLength(1000)
    expect(new Set(page.body.map((entry: { resourceId: string }) => entry.resourceId)).size).toBe(1000)
    expect(page.body.every((entry: { action: string }) => entry.action === 'seed.entry')).toBe(true)
    expect(others.map((response) => response.status)).toEqual([200, 200, 200])
    expect(server.output()).not.toMatch(/EMFILE/)
  })
})
