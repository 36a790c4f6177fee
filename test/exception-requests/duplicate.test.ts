import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'
import { SHARED_STORAGES, sharedStorageEnv } from '../support/backends'
import { readEvents } from '../support/events'

/**
 * Issue 24, item 10: a developer's second pending request for the same proposal (same rule and
 * selector) is 409 `duplicate_exception_request` naming the pending one, and creates nothing;
 * of two identical submissions at once, on one process or two sharing storage, exactly one is created.
 */

const TOKEN = 'fwp_exceptionRequestDuplicates000000000001'
const BASE = '/v1/default/config/fw/exception-requests'
const RULES = [{ id: 'no-malware', executionPhase: 'download', selector: { function: { name: 'malware' } } }]
const ask = (id: string, packageName = 'left-pad', version: string | undefined = '1.3.0') => ({
  proposedException: {
    id,
    rule: 'no-malware',
    selector: { packageName, ...(version !== undefined ? { version } : {}) },
  },
  justification: 'false positive',
})

describe('duplicate exception requests', () => {
  let server: RunningServer
  let alice: Api
  let carl: Api
  beforeAll(async () => {
    server = await startServer({ BOOTSTRAP_TOKEN: TOKEN })
    const owner = apiClient(server.url, TOKEN)
    const [a, c] = await Promise.all(['alice', 'carl'].map((user) => createUser(server, user)))
    ;[alice, carl] = [a, c].map((token) => apiClient(server.url, token))
    const created = await owner('PUT', '/v1/default/config/fw', {
      rules: RULES,
      permissions: { alice: ['fw:access'], carl: ['fw:access'] },
    })
    expect(created.status).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const mine = async (who: Api) => (await who('GET', `${BASE}?status=pending`)).body as { id: string }[]

  it('answers 409 naming the pending request, and creates nothing', async () => {
    const first = await alice('POST', BASE, ask('ex-dup'))
    expect(first.status).toBe(201)
    const pendingBefore = await mine(alice)
    const eventsBefore = (await readEvents(server)).filter((e) => e.type === 'exception-request.created').length
    // The same proposal, even under another exception id or justification, is the same request.
    for (const body of [ask('ex-dup'), { ...ask('ex-other-id'), justification: 'please' }]) {
      const again = await alice('POST', BASE, body)
      expect(again.status).toBe(409)
      expect(again.headers.get('content-type')).toContain('application/problem+json')
      expect(again.body).toMatchObject({
        code: 'duplicate_exception_request',
        pendingRequestId: first.body.id,
        pendingRequestUrl: `${BASE}/${first.body.id}`,
      })
      expect(again.body.detail).toContain(first.body.id)
    }
    expect(await mine(alice)).toEqual(pendingBefore)
    const eventsAfter = (await readEvents(server)).filter((e) => e.type === 'exception-request.created').length
    expect(eventsAfter).toBe(eventsBefore)
  })

  it('another version, package or requester is a new request; so is one after the first is decided', async () => {
    const base = await alice('POST', BASE, ask('ex-v1', 'is-odd', '1.0.0'))
    expect(base.status).toBe(201)
    expect((await alice('POST', BASE, ask('ex-v2', 'is-odd', '2.0.0'))).status).toBe(201)
    expect((await alice('POST', BASE, ask('ex-all', 'is-odd', undefined))).status).toBe(201)
    expect((await alice('POST', BASE, ask('ex-even', 'is-even', '1.0.0'))).status).toBe(201)
    // Carl's identical request is his own to follow (an approval approves both).
    expect((await carl('POST', BASE, ask('ex-v1', 'is-odd', '1.0.0'))).status).toBe(201)
    expect((await alice('POST', `${BASE}/${base.body.id}/withdraw`)).status).toBe(200)
    expect((await alice('POST', BASE, ask('ex-v1', 'is-odd', '1.0.0'))).status).toBe(201)
  })

  it('of identical submissions at once, exactly one is created', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => alice('POST', BASE, ask('ex-burst', 'burst'))))
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
    const winner = results.find((r) => r.status === 201)!.body.id
    for (const loser of results.filter((r) => r.status === 409)) expect(loser.body.pendingRequestId).toBe(winner)
  })
})

describe.each(SHARED_STORAGES)('identical submissions on two processes sharing one %s', (storage) => {
  let servers: RunningServer[] = []
  beforeAll(async () => {
    const env = { ...(await sharedStorageEnv(storage, 'exr-dup')), BOOTSTRAP_TOKEN: TOKEN }
    servers = await Promise.all([startServer(env), startServer(env)])
  }, 120_000)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('create exactly one request per proposal: one 201 and one 409 per pair', async () => {
    const [a, b] = servers.map((s) => apiClient(s.url, TOKEN))
    expect((await a('PUT', '/v1/default/config/fw', { rules: RULES })).status).toBe(201)
    const rounds = 8
    const results = await Promise.all(
      Array.from({ length: rounds }, (_, i) => [
        a('POST', BASE, ask(`ex-${i}`, `pkg-${i}`)),
        b('POST', BASE, ask(`ex-${i}`, `pkg-${i}`)),
      ]).flat(),
    )
    const pending = (await a('GET', `${BASE}?status=pending`)).body as {
      id: string
      proposedException: { selector: { packageName: string } }
    }[]
    for (let i = 0; i < rounds; i++) {
      const pair = [results[2 * i], results[2 * i + 1]]
      expect(pair.map((r) => r.status).sort()).toEqual([201, 409])
      const created = pair.find((r) => r.status === 201)!.body.id
      expect(pair.find((r) => r.status === 409)!.body).toMatchObject({
        code: 'duplicate_exception_request',
        pendingRequestId: created,
      })
      expect(pending.filter((r) => r.proposedException.selector.packageName === `pkg-${i}`).map((r) => r.id)).toEqual([
        created,
      ])
    }
  })
})
