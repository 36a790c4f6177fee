import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type RunningServer } from '../support/server'
import { eventually } from '../support/wait-for'
import { LiveStreamSlots, parseLiveStreamLimit } from '../../server/dashboard/live-slots'

const NS = 'default'
const TOKEN = `fwp_${'l'.repeat(43)}`
const LIMIT = 2

/** Signs in with the token through the form (CSRF field and cookie, as a browser does); returns the cookie. */
async function signIn(base: string): Promise<string> {
  const cookieOf = (response: Response, previous = '') => {
    const set = response.headers.getSetCookie().map((c) => c.split(';')[0])
    return set.length ? set.join('; ') : previous
  }
  const form = await fetch(`${base}/sign-in`)
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1]
  if (!csrf) throw new Error('no CSRF field on the sign-in page')
  const signedIn = await fetch(`${base}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, namespace: NS, token: TOKEN }).toString(),
  })
  expect(signedIn.status).toBe(303)
  return cookieOf(signedIn, cookieOf(form))
}

/** Opens a live stream and reads its first message; the stream stays open until `abort`. */
async function open(url: string, cookie: string) {
  const abort = new AbortController()
  const response = await fetch(url, { headers: { cookie, accept: 'text/event-stream' }, signal: abort.signal })
  if (response.status === 200) {
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain('event: state')
  }
  return { response, close: () => abort.abort() }
}

describe('LiveStreamSlots', () => {
  it('hands out `limit` slots, refuses the next, and takes one back once however often it is released', () => {
    const slots = new LiveStreamSlots(2)
    const a = slots.take()!
    expect(slots.take()).not.toBeNull()
    expect(slots.take()).toBeNull()
    a()
    a()
    expect(slots.size).toBe(1)
    expect(slots.take()).not.toBeNull()
    expect(slots.take()).toBeNull()
  })

  it('reads DASHBOARD_LIVE_STREAMS: default 1000, a positive whole number, anything else refused', () => {
    expect(parseLiveStreamLimit(undefined)).toBe(1000)
    expect(parseLiveStreamLimit(' 25 ')).toBe(25)
    for (const bad of ['0', '-1', '2.5', 'many'])
      expect(() => parseLiveStreamLimit(bad)).toThrow(/DASHBOARD_LIVE_STREAMS/)
  })
})

describe(`live streams at the bound (DASHBOARD_LIVE_STREAMS=${LIMIT}, built server)`, () => {
  let server: RunningServer
  let url: string
  let cookie: string
  beforeAll(async () => {
    server = await startServer({
      BOOTSTRAP_TOKEN: TOKEN,
      BOOTSTRAP_NAMESPACE: NS,
      DASHBOARD_LIVE_STREAMS: String(LIMIT),
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    })
    const created = await apiClient(server.url, TOKEN)('POST', `/v1/${NS}/webhooks`, {
      name: 'live',
      url: 'http://127.0.0.1:9/hook',
      eventTypes: ['audit.test.*'],
    })
    expect(created.status).toBe(201)
    url = `${server.url}/namespaces/${NS}/live/webhooks/${created.body.id}`
    cookie = await signIn(server.url)
  })
  afterAll(async () => server?.stop())

  it('serves the limit, refuses one more with 503 live_streams_exhausted and Retry-After, and serves again once one closes', async () => {
    const streams = [await open(url, cookie), await open(url, cookie)]
    expect(streams.map((s) => s.response.status)).toEqual([200, 200])

    const refused = await open(url, cookie)
    expect(refused.response.status).toBe(503)
    expect(refused.response.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.response.headers.get('retry-after')).toBe('5')
    const problem = await refused.response.json()
    expect(problem).toMatchObject({ status: 503, code: 'live_streams_exhausted' })
    expect(problem.detail).toContain(`at most ${LIMIT} live streams`)

    // A refusal holds no slot; a closed stream gives its slot back.
    streams[0].close()
    const again = await eventually(
      async () => {
        const attempt = await open(url, cookie)
        if (attempt.response.status === 200) return attempt
        await attempt.response.body?.cancel()
        return null
      },
      { what: 'a stream after one closed', timeoutMs: 10_000, intervalMs: 50 },
    )
    expect(again!.response.status).toBe(200)
    expect((await open(url, cookie)).response.status).toBe(503)
    again!.close()
    streams[1].close()
  })
})
