import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'
import { redisUrl, uniquePrefix } from '../support/redis'

const TOKEN = 'fwp_exceptionRequestRestart00000000000001'
const BASE = '/v1/default/config/fw/exception-requests'
const proposal = (id: string, packageName: string) => ({ id, rule: 'no-malware', selector: { packageName } })

const storages = {
  fs: async () => ({ DATA_DIR: mkdtempSync(join(tmpdir(), 'pf-exr-restart-')) }),
  redis: async () => ({ REDIS_URL: await redisUrl(), REDIS_PREFIX: uniquePrefix('exr-restart') }),
}

describe.each(Object.keys(storages) as (keyof typeof storages)[])(
  'exception requests survive a SIGKILL (%s storage)',
  (kind) => {
    let server: RunningServer | undefined
    afterEach(async () => {
      await server?.stop()
    })

    it('keeps every request in its state and lets it still be decided after a restart', async () => {
      const env = { ...(await storages[kind]()), BOOTSTRAP_TOKEN: TOKEN }
      server = await startServer(env)
      const [aliceToken, ritaToken] = await Promise.all([createUser(server, 'alice'), createUser(server, 'rita')])
      const connect = (url: string): Record<'owner' | 'alice' | 'rita', Api> => ({
        owner: apiClient(url, TOKEN),
        alice: apiClient(url, aliceToken),
        rita: apiClient(url, ritaToken),
      })
      let api = connect(server.url)
      await api.owner('PUT', '/v1/default/config/fw', {
        rules: [{ id: 'no-malware', executionPhase: 'download', selector: { function: { name: 'malware' } } }],
        permissions: { alice: ['fw:access'], rita: ['fw:read', 'fw:update:exception'] },
      })
      const ids: Record<string, string> = {}
      for (const name of ['pending', 'denied', 'approved', 'withdrawn', 'later']) {
        const res = await api.alice('POST', BASE, {
          proposedException: proposal(`ex-${name}`, `pkg-${name}`),
          justification: name,
        })
        expect(res.status).toBe(201)
        ids[name] = res.body.id
      }
      expect((await api.rita('POST', `${BASE}/${ids.denied}/deny`, { comment: 'no' })).status).toBe(200)
      expect(
        (
          await api.rita('POST', `${BASE}/${ids.approved}/approve`, {
            exception: proposal('ex-approved', 'pkg-approved'),
          })
        ).status,
      ).toBe(200)
      expect((await api.alice('POST', `${BASE}/${ids.withdrawn}/withdraw`)).status).toBe(200)
      const before = { alice: (await api.alice('GET', BASE)).body, rita: (await api.rita('GET', BASE)).body }

      expect(await server.stop('SIGKILL')).toBeNull()
      server = await startServer({ ...env, ...(kind === 'fs' ? { DATA_DIR: server.env.DATA_DIR } : {}) })
      api = connect(server.url)

      // Same states, same decision fields, same per-caller flags.
      expect((await api.alice('GET', BASE)).body).toEqual(before.alice)
      expect((await api.rita('GET', BASE)).body).toEqual(before.rita)
      expect(before.rita.map((r: { status: string }) => r.status)).toEqual([
        'pending',
        'denied',
        'approved',
        'withdrawn',
        'pending',
      ])

      // And the restored actors still move, and still refuse what their state does not allow.
      expect(
        await api.rita('POST', `${BASE}/${ids.pending}/approve`, { exception: proposal('ex-pending', 'pkg-pending') }),
      ).toMatchObject({ status: 200, body: { request: { status: 'approved' } } })
      expect(
        await api.rita('POST', `${BASE}/${ids.denied}/approve`, { exception: proposal('ex-denied', 'pkg-denied') }),
      ).toMatchObject({ status: 200, body: { request: { status: 'approved' } } })
      expect(await api.alice('POST', `${BASE}/${ids.later}/withdraw`)).toMatchObject({
        status: 200,
        body: { status: 'withdrawn' },
      })
      expect(await api.rita('POST', `${BASE}/${ids.approved}/deny`, { comment: 'x' })).toMatchObject({
        status: 409,
        body: { code: 'invalid_state' },
      })
      expect(await api.alice('POST', `${BASE}/${ids.withdrawn}/withdraw`)).toMatchObject({
        status: 409,
        body: { code: 'invalid_state' },
      })
      const firewall = await api.owner('GET', '/v1/default/config/fw')
      expect(firewall.body.exceptions.map((e: { id: string }) => e.id)).toEqual([
        'ex-approved',
        'ex-pending',
        'ex-denied',
      ])
    })
  },
)
