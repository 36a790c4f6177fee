import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { backendOf, readEvents } from '../support/events'

const SECRETS = {
  password: 'planted-password-7f3a',
  token: 'planted-upstream-token-9c1d',
  artifact: 'planted-artifact-token-2b8e',
}

describe('no secret leaks', () => {
  let server: RunningServer
  let api: Api
  const responses: string[] = []
  const materials: string[] = []
  beforeAll(async () => {
    server = await startServer({ LOG_LEVEL: 'debug' })
    const token = bootstrapToken(server)
    materials.push(token)
    const base = apiClient(server.url, token)
    api = async (...args) => {
      const res = await base(...args)
      responses.push(JSON.stringify(res.body) + JSON.stringify([...res.headers]))
      return res
    }
    const personal = await api('POST', '/v1/default/tokens/personal', { name: 'p' })
    const service = await api('POST', '/v1/default/tokens/service', { name: 's', permissions: ['fw:read'] })
    materials.push(personal.body.token, service.body.token)
    responses.splice(0) // the two create answers carry the material by design (shown once)
    await api('PUT', '/v1/default/config/fw', {
      upstreams: [
        { id: 'a', endpoint: 'https://a.example', credentials: { username: 'u', password: SECRETS.password } },
        {
          id: 'b',
          endpoint: 'https://b.example',
          credentials: { token: SECRETS.token },
          artifactCredentials: [{ host: 'cdn.example', credentials: { token: SECRETS.artifact } }],
        },
      ],
    })
    await api('PUT', '/v1/default/config/fw/upstreams/a/credentials', {
      username: 'u',
      password: SECRETS.password + '-2',
    })
    await api('GET', '/v1/default/config/fw')
    await api('GET', '/v1/default/config')
    await api('GET', '/v1/default/config/fw/history')
    await api('GET', '/v1/default/config/fw/version/1')
    await api('GET', '/v1/default/tokens/personal')
    await api('GET', '/v1/default/tokens/service')
    await api('GET', '/v1/default/audit')
    await apiClient(server.url, personal.body.token)('GET', '/v1/default/nope')
    await apiClient(server.url, `${service.body.token}~interaction-1`)('GET', '/v1/default/tokens/service')
  })
  afterAll(async () => {
    await server.stop()
  })

  const planted = () => [...Object.values(SECRETS), ...materials]

  it('responses never echo credentials or tokens', () => {
    const all = responses.join('\n')
    for (const secret of planted()) expect(all).not.toContain(secret)
    expect(all).toContain('[REDACTED]')
  })

  it('events never carry credentials or token material', async () => {
    const events = JSON.stringify(await readEvents(server))
    for (const secret of planted()) expect(events).not.toContain(secret)
    expect(events).toContain('"interactionId":"interaction-1"')
  })

  it('the server log never carries them', () => {
    const log = server.output()
    for (const secret of [...Object.values(SECRETS), ...materials.slice(1)]) expect(log).not.toContain(secret)
  })

  it('tokens are stored only as hashes', async () => {
    const backend = await backendOf(server)
    try {
      const keys = await backend.keyValue.keys('token')
      const stored = JSON.stringify(await backend.keyValue.getMany(keys))
      for (const material of materials) expect(stored).not.toContain(material)
    } finally {
      await backend.close()
    }
  })
})
