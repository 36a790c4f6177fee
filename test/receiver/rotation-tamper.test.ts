import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReceiver, toFetchHandler, toNodeListener, verify, type Event } from '../../receiver'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { waitFor } from '../webhooks/support/built-server'
import { newSecret } from './support'

interface Captured {
  headers: Record<string, string>
  body: Uint8Array<ArrayBuffer>
}

const token = `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`
let server: RunningServer
let api: Api
let capture: Server
let captureUrl = ''
const captured: Captured[] = []
let liveSecrets: string[] = []
const liveEvents: Event[] = []

/** Keeps each delivery's exact bytes and headers, and answers it with the kit (secrets: `liveSecrets`). */
async function startCapture(): Promise<void> {
  const live = createReceiver({ secrets: () => liveSecrets, onEvent: (event) => void liveEvents.push(event) })
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    // What a replay needs: the Standard Webhooks headers and the content type (not length, host...).
    const kept = Object.entries(req.headers as IncomingHttpHeaders).filter(
      ([k]) => k.startsWith('webhook-') || k === 'content-type',
    )
    const headers = Object.fromEntries(kept.map(([k, v]) => [k, String(v)]))
    captured.push({ headers, body: new Uint8Array(Buffer.concat(chunks)) })
    const answer = await live.receive({ body: Buffer.concat(chunks), headers })
    res.writeHead(answer.status, answer.headers).end(answer.body)
  }
  // A failed capture answers 500, so the sender retries and the test sees it.
  capture = createServer((req, res) => void handle(req, res).catch(() => res.writeHead(500).end()))
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve))
  captureUrl = `http://127.0.0.1:${(capture.address() as AddressInfo).port}/hook`
}

/** Replays a captured delivery into a fresh kit receiver configured with `secrets`. */
async function replay(delivery: Captured, secrets: string[], body: Uint8Array<ArrayBuffer> | string = delivery.body) {
  const handled: Event[] = []
  const handler = toFetchHandler(createReceiver({ secrets, onEvent: (event) => void handled.push(event) }))
  const response = await handler(
    new Request('http://receiver.test/hook', { method: 'POST', headers: delivery.headers, body }),
  )
  return { status: response.status, code: response.status >= 400 ? (await response.json()).code : undefined, handled }
}

async function testSend(hookId: string): Promise<Captured> {
  const before = captured.length
  expect((await api('POST', `/v1/default/webhooks/${hookId}/test`)).status).toBe(202)
  await waitFor(() => captured.length > before, 15_000, 'the test delivery')
  return captured[captured.length - 1]
}

beforeAll(async () => {
  await startCapture()
  server = await startServer({
    BOOTSTRAP_TOKEN: token,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    WEBHOOK_SECRET_OVERLAP: '3s',
  })
  api = apiClient(server.url, token)
})
afterAll(async () => {
  await server?.stop()
  capture?.closeAllConnections()
  await new Promise((resolve) => capture?.close(resolve))
})

describe('the kit against deliveries of the built service', () => {
  it('verifies with the old secret, the new one or both while a rotation overlaps, and only the new after', async () => {
    const created = await api('POST', '/v1/default/webhooks', {
      name: 'rotating',
      url: captureUrl,
      eventTypes: ['config.firewall.*'],
    })
    expect(created.status).toBe(201)
    const oldSecret: string = created.body.secret
    const rotated = await api('POST', `/v1/default/webhooks/${created.body.id}/secret/rotate`)
    expect(rotated.status).toBe(200)
    const newOne: string = rotated.body.secret
    liveSecrets = [newOne, oldSecret]

    const during = await testSend(created.body.id)
    expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2)
    for (const secrets of [[oldSecret, newOne], [oldSecret], [newOne]]) {
      const answer = await replay(during, secrets)
      expect(answer.status, `configured with ${secrets.length} secret(s)`).toBe(200)
      expect(answer.handled.map((e) => e.type)).toEqual(['webhook.test'])
    }
    expect(verify(during.body, during.headers, [oldSecret]).secretIndex).toBe(0)
    expect((await replay(during, [newSecret()])).code).toBe('no_matching_signature')
    // The live receiver (both secrets) handled the real delivery as it arrived.
    await waitFor(() => liveEvents.some((e) => e.type === 'webhook.test'), 5_000, 'the live receiver handled it')

    // Past the overlap the service signs with the new secret alone.
    const overlapEnd = Date.parse(rotated.body.previousSecretValidUntil)
    await waitFor(() => Date.now() > overlapEnd + 100, 10_000, 'the end of the overlap')
    const after = await testSend(created.body.id)
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1)
    expect((await replay(after, [newOne])).status).toBe(200)
    expect((await replay(after, [oldSecret, newOne])).status).toBe(200)
    expect((await replay(after, [oldSecret])).code).toBe('no_matching_signature')
  })

  it('refuses a tampered body or a re-labelled delivery with 401 and never calls the handler', async () => {
    const created = await api('POST', '/v1/default/webhooks', {
      name: 'tampered',
      url: captureUrl,
      eventTypes: ['config.firewall.*'],
    })
    const secret: string = created.body.secret
    liveSecrets = [secret]
    const delivery = await testSend(created.body.id)
    expect((await replay(delivery, [secret])).status).toBe(200)

    const text = Buffer.from(delivery.body).toString('utf8')
    const tampered = text.replace(/"namespace":"default"/, '"namespace":"other"')
    expect(tampered).not.toBe(text)
    const refused = await replay(delivery, [secret], tampered)
    expect(refused).toEqual({ status: 401, code: 'no_matching_signature', handled: [] })
    const relabelled = await replay({ ...delivery, headers: { ...delivery.headers, 'webhook-id': 'whdel-replayed' } }, [
      secret,
    ])
    expect(relabelled).toEqual({ status: 401, code: 'no_matching_signature', handled: [] })

    // Over real HTTP through the node:http adapter, as an attacker in the path would send it.
    const handled: Event[] = []
    const kit = createServer(
      toNodeListener(createReceiver({ secrets: secret, onEvent: (event) => void handled.push(event) })),
    )
    await new Promise<void>((resolve) => kit.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(kit.address() as AddressInfo).port}/`
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: tampered })
      expect([response.status, (await response.json()).code]).toEqual([401, 'no_matching_signature'])
      const genuine = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body })
      expect(genuine.status).toBe(200)
      expect(handled.map((e) => e.type)).toEqual(['webhook.test'])
    } finally {
      kit.closeAllConnections()
      await new Promise((resolve) => kit.close(resolve))
    }
  })
})
