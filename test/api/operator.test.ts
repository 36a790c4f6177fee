import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type RunningServer } from '../support/server'

/** What an operator sees after `npm start`, and what a browser asks for first. */
describe('operator start output', () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ LOG_LEVEL: 'info' })
  }, 60_000)
  afterAll(async () => {
    await server.stop()
  })

  it('prints the dashboard URL, where the token is, and the two next commands, never the token itself twice', async () => {
    // The banner follows readiness by a moment: wait for its last line.
    for (const deadline = Date.now() + 10_000; !server.output().includes('npm run admin -- create-user');) {
      if (Date.now() > deadline) throw new Error(`no start banner in:\n${server.output()}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    const output = server.output()
    expect(output).toContain(`Dashboard  http://localhost:${server.port}/`)
    expect(output).toMatch(/Token {6}the owner's token is in \S*bootstrap-token/)
    expect(output).toContain(`curl -H "Authorization: Bearer $(cat `)
    expect(output).toContain(`http://localhost:${server.port}/v1/default/config`)
    expect(output.split(bootstrapToken(server)).length - 1).toBe(1)
  })

  it('names the dashboard route template in the access log, not /*', async () => {
    const res = await fetch(`${server.url}/namespaces/default/firewalls/web/log`, { redirect: 'manual' })
    expect(res.status).toBe(303)
    await res.arrayBuffer()
    let access: { route?: string } | undefined
    for (const deadline = Date.now() + 10_000; !access;) {
      access = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; method?: string; status?: number; route?: string })
        .find((line) => line.msg === 'request' && line.method === 'GET' && line.status === 303)
      if (!access && Date.now() > deadline) throw new Error('no access line')
      if (!access) await new Promise((r) => setTimeout(r, 50))
    }
    expect(access.route).toBe('/namespaces/{ns}/firewalls/{fw}/log')
  })

  it('shows a token as used in a list made right after its first use', async () => {
    const owner = apiClient(server.url, bootstrapToken(server))
    const created = await owner('POST', '/v1/default/tokens/personal', { name: 'ci' })
    expect(created.status).toBe(201)
    expect(created.body.lastUsedAt).toBeNull()
    const fresh = apiClient(server.url, created.body.token)
    expect((await fresh('GET', '/v1/default/me')).status).toBe(200)
    const listed = (await owner('GET', '/v1/default/tokens/personal')).body.find(
      (t: { id: string }) => t.id === created.body.id,
    )
    expect(Date.parse(listed.lastUsedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.createdAt))
  })

  it('serves a favicon instead of a 404', async () => {
    const res = await fetch(`${server.url}/favicon.ico`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(await res.text()).toContain('<svg')
  })
})
