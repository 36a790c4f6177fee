import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, toNodeListener as h3Listener } from 'h3'
import { afterAll, describe, expect, it } from 'vitest'
import { createReceiver, toFetchHandler, toH3Handler, toNodeListener } from '../../receiver'
import { envelope, firewallEvent, newSecret, signedHeaders } from './support'

const secret = newSecret()
const handled: string[] = []
const receiver = createReceiver({ secrets: secret, onEvent: (event) => void handled.push(event.id) })
const servers: Server[] = []

async function listen(listener: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(listener)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
}
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve))
})

// Each adapter as a caller reaches it: node and h3 over real HTTP, the fetch handler with a Request.
const adapters: [string, () => Promise<(init: RequestInit) => Promise<Response>>][] = [
  [
    'node:http',
    async () => {
      const url = await listen(toNodeListener(receiver, { maxBodyBytes: 4096 }))
      return (init) => fetch(url, init)
    },
  ],
  [
    'h3',
    async () => {
      const app = createApp().use('/hook', toH3Handler(receiver, { maxBodyBytes: 4096 }))
      const url = await listen(h3Listener(app))
      return (init) => fetch(url, init)
    },
  ],
  [
    'Request -> Response',
    async () => {
      const handler = toFetchHandler(receiver, { maxBodyBytes: 4096 })
      return (init) => handler(new Request('http://receiver.test/hook', init))
    },
  ],
]

describe.each(adapters)('%s adapter', (_name, make) => {
  it('answers 200 to a signed delivery, handling its events once; 200 again for the retry', async () => {
    const call = await make()
    const event = firewallEvent()
    const body = envelope([event])
    const headers = signedHeaders(body, [secret])
    const first = await call({ method: 'POST', headers, body })
    expect([first.status, await first.json()]).toEqual([200, { handled: 1, skipped: 0, duplicate: false }])
    const again = await call({ method: 'POST', headers, body })
    expect((await again.json()).duplicate).toBe(true)
    expect(handled.filter((id) => id === event.id)).toHaveLength(1)
  })

  it('refuses a tampered body with 401 and a problem, handler not called', async () => {
    const call = await make()
    const event = firewallEvent()
    const body = envelope([event])
    const answer = await call({
      method: 'POST',
      headers: signedHeaders(body, [secret]),
      body: body.replace('"npm"', '"pypi"'),
    })
    const seen = [answer.status, answer.headers.get('content-type'), (await answer.json()).code]
    expect(seen).toEqual([401, 'application/problem+json', 'no_matching_signature'])
    expect(handled).not.toContain(event.id)
  })

  it('answers 405 to other methods, 413 past the body limit and 400 without the headers', async () => {
    const call = await make()
    const get = await call({ method: 'GET' })
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST'])
    const big = envelope([{ ...firewallEvent(), data: { ...firewallEvent().data, config: { pad: 'x'.repeat(5000) } } }])
    expect((await call({ method: 'POST', headers: signedHeaders(big, [secret]), body: big })).status).toBe(413)
    const unsigned = await call({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: envelope([firewallEvent()]),
    })
    expect([unsigned.status, (await unsigned.json()).code]).toEqual([400, 'missing_headers'])
  })
})
