import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootstrapToken, startServer, type RunningServer } from '../support/server'

/** What an operator sees after `npm start`, and what a browser asks for first. */
describe('operator start output', () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  }, 60_000)
  afterAll(async () => {
    await server.stop()
  })

  it('prints the dashboard URL, where the token is, and the two next commands, never the token itself twice', async () => {
    // The banner follows readiness by a moment: wait for its last line.
    for (const deadline = Date.now() + 10_000; !server.output().includes('npm run admin -- create-user'); ) {
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

  it('serves a favicon instead of a 404', async () => {
    const res = await fetch(`${server.url}/favicon.ico`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(await res.text()).toContain('<svg')
  })
})
