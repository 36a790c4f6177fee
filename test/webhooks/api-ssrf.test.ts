import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, startHarness, type Harness } from './support/harness'

let h: Harness
let sentinel: Server
let port: number
let connections = 0
let resolveTo = '93.184.216.34'

beforeAll(async () => {
  // Every refused URL points at this listener (loopback, both families): no connection may reach it.
  sentinel = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => sentinel.listen(0, '::', resolve))
  port = (sentinel.address() as AddressInfo).port
  h = await startHarness({
    env: { WEBHOOK_ALLOWED_NETWORKS: '', WEBHOOK_REJECTED_DOMAINS: 'evil.example' },
    lookup: async (host) => {
      if (host === 'internal.example') return [{ address: '10.1.2.3', family: 4 }]
      if (host === 'mixed.example')
        return [
          { address: '93.184.216.34', family: 4 },
          { address: 'fd00::1', family: 6 },
        ]
      if (host === 'rebind.example') return [{ address: resolveTo, family: 4 }]
      if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }]
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    },
  })
})
afterAll(async () => {
  await h?.close()
  await new Promise<void>((resolve) => sentinel.close(() => resolve()))
})

const create = (url: string) => h.api('POST', `/v1/${NS}/webhooks`, { name: 'ssrf', url, eventTypes: ['config.*'] })

describe('webhook URL policy through the API', () => {
  it.each([
    ['http://10.0.0.1/hook', 'url_not_public'],
    ['http://169.254.169.254/latest/meta-data', 'url_not_public'],
    ['http://[::1]:PORT/hook', 'url_not_public'],
    ['http://[::ffff:127.0.0.1]:PORT/hook', 'url_not_public'],
    ['http://0x7f.1:PORT/', 'url_not_public'],
    ['http://2130706433:PORT/', 'url_not_public'],
    ['http://100.64.0.1/', 'url_not_public'],
    ['http://224.0.0.1/', 'url_not_public'],
    ['http://internal.example:PORT/hook', 'url_not_public'],
    ['http://mixed.example:PORT/hook', 'url_not_public'],
    ['http://localhost:PORT/hook', 'url_not_public'],
    ['ftp://127.0.0.1:PORT/hook', 'url_scheme'],
    ['file:///etc/passwd', 'url_scheme'],
    ['https://api.evil.example/hook', 'url_rejected_domain'],
  ])('refuses %s with 400 %s before any connection', async (template, code) => {
    const res = await create(template.replace('PORT', String(port)))
    expect(res.status).toBe(400)
    expect(res.body.code).toBe(code)
    expect(res.body.errors).toEqual([{ path: 'url', message: expect.any(String) }])
    expect(connections).toBe(0)
  })

  it('accepts a name that does not resolve yet: the guard runs again at each attempt', async () => {
    const res = await create('https://not-deployed-yet.invalid/hook')
    expect(res.status).toBe(201)
    expect(connections).toBe(0)
  })

  it('refuses an update to a non-public URL the same way', async () => {
    const created = await create('https://rebind.example/hook')
    expect(created.status).toBe(201)
    const res = await h.api('PUT', `/v1/${NS}/webhooks/${created.body.id}`, {
      name: 'ssrf',
      url: 'http://10.0.0.1/',
      eventTypes: ['config.*'],
    })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('url_not_public')
  })

  it('checks the address again at each attempt (DNS rebinding): no connection, responseStatus 0', async () => {
    const created = await h.api('POST', `/v1/${NS}/webhooks`, {
      name: 'rebind',
      url: `http://rebind.example:${port}/hook`,
      eventTypes: ['audit.test.*'],
    })
    expect(created.status).toBe(201)
    resolveTo = '127.0.0.1'
    await h.api('POST', `/v1/${NS}/webhooks/${created.body.id}/test`)
    await h.runFor(1_000)
    const [record] = (await h.api('GET', `/v1/${NS}/webhooks/${created.body.id}/deliveries`)).body
    expect(record).toMatchObject({ status: 'retrying', responseStatus: 0 })
    expect(record.error).toMatch(/^url_not_public/)
    expect(connections).toBe(0)
  })
})
