import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../support/server'

/**
 * Paths and methods no route serves, outside `/v1/` (which has its own router): a problem (RFC
 * 9457) for clients and the dashboard's page for a browser, never Nitro's own JSON error.
 */

let server: RunningServer

beforeAll(async () => {
  server = await startServer()
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

describe('a request no route serves', () => {
  it('gets a 404 problem with a stable code, and h3 says nothing of its own', async () => {
    const response = await fetch(`${server.url}/nothing/here?token=secret`)
    expect(response.status).toBe(404)
    expect(response.statusText).toBe('Not Found')
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('cache-control')).toBe('no-store')
    const problem = (await response.json()) as Record<string, unknown>
    expect(problem).toMatchObject({ status: 404, code: 'route_not_found', title: 'Not Found' })
    // The path is named, the query (which may carry anything) is not.
    expect(problem.detail).toBe('nothing is served at /nothing/here')
    expect(JSON.stringify(problem)).not.toContain('secret')
    expect(problem).not.toHaveProperty('statusMessage')
  })

  it('gets a 405 problem for a method a route does not take', async () => {
    const response = await fetch(`${server.url}/healthz`, { method: 'POST' })
    expect(response.status).toBe(405)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({
      code: 'method_not_allowed',
      detail: 'POST is not allowed on /healthz',
    })
  })

  it("gets the dashboard's error page in a browser, with the path escaped", async () => {
    const response = await fetch(`${server.url}/%3Cscript%3Ealert(1)%3C/script%3E`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    })
    expect(response.status).toBe(404)
    expect(response.statusText).toBe('Not Found')
    expect(response.headers.get('content-type')).toContain('text/html')
    const page = await response.text()
    expect(page).toContain('<h1>Not Found</h1>')
    expect(page).toContain('nothing is served at')
    expect(page).not.toContain('<script>alert(1)')
    expect(page).toContain('Go back')
  })
})
