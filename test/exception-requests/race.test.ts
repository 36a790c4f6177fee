import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type RunningServer } from '../support/server'
import { SHARED_STORAGES, sharedStorageEnv } from '../support/backends'
import { readEvents } from '../support/events'

const TOKEN = 'fwp_exceptionRequestRace0000000000000001'
const BASE = '/v1/default/config/fw/exception-requests'
const ROUNDS = 10
const proposal = (id: string, packageName: string) => ({ id, rule: 'no-malware', selector: { packageName } })

describe.each(SHARED_STORAGES)('two approvals of one request at once, on two processes sharing one %s', (storage) => {
  let servers: RunningServer[] = []
  beforeAll(async () => {
    const env = { ...(await sharedStorageEnv(storage, 'exr-race')), BOOTSTRAP_TOKEN: TOKEN }
    servers = await Promise.all([startServer(env), startServer(env)])
  }, 120_000)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('lets exactly one win per request: one 200, one 409, one exception, one set of events', async () => {
    const [a, b] = servers.map((s) => apiClient(s.url, TOKEN))
    await a('PUT', '/v1/default/config/fw', {
      rules: [{ id: 'no-malware', executionPhase: 'download', selector: { function: { name: 'malware' } } }],
    })
    const ids: string[] = []
    for (let i = 0; i < ROUNDS; i++) {
      const res = await (i % 2 ? b : a)('POST', BASE, {
        proposedException: proposal(`ex-${i}`, `pkg-${i}`),
        justification: 'x',
      })
      expect(res.status).toBe(201)
      ids.push(res.body.id)
    }
    const versionBefore = (await a('GET', '/v1/default/config/fw')).body.version
    const eventsBefore = (await readEvents(servers[0])).length

    // Every pair fires together, and all pairs at once: the two exception ids differ, so only the
    // request's state (not a duplicate id) can stop the second approval.
    const results = await Promise.all(
      ids.flatMap((id, i) => [
        a('POST', `${BASE}/${id}/approve`, { exception: proposal(`ex-a-${i}`, `pkg-${i}`) }),
        b('POST', `${BASE}/${id}/approve`, { exception: proposal(`ex-b-${i}`, `pkg-${i}`) }),
      ]),
    )
    for (let i = 0; i < ROUNDS; i++) {
      const pair = [results[2 * i], results[2 * i + 1]]
      expect(pair.map((r) => r.status).sort()).toEqual([200, 409])
      expect(pair.find((r) => r.status === 409)!.body.code).toBe('invalid_state')
    }

    const firewall = (await a('GET', '/v1/default/config/fw')).body
    expect(firewall.version).toBe(versionBefore + ROUNDS)
    const winners = results
      .filter((r) => r.status === 200)
      .map((r) => r.body.exception.id)
      .sort()
    expect(firewall.exceptions.map((e: { id: string }) => e.id).sort()).toEqual(winners)
    for (const [i, id] of ids.entries()) {
      const read = await b('GET', `${BASE}/${id}`)
      expect(read.body).toMatchObject({
        status: 'approved',
        exceptionId: expect.stringMatching(new RegExp(`^ex-[ab]-${i}$`)),
      })
    }

    const events = (await readEvents(servers[0])).slice(eventsBefore)
    expect(events.filter((e) => e.type === 'config.firewall.updated')).toHaveLength(ROUNDS)
    const approved = events
      .filter((e) => e.type === 'exception-request.approved')
      .map((e) => (e.data.request as { id: string }).id)
    expect(approved.sort()).toEqual([...ids].sort())
  })
})
