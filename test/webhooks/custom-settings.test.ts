import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'
import { Receiver } from './support/receiver'

/** Per-webhook `rateLimit` and `headers` (#14): saved, shown redacted, refused out of bounds, and applied. */

let h: Harness
afterEach(async () => h?.close())

const hook = (extra: Record<string, unknown> = {}) => ({
  name: 'hook',
  url: h.receiver.url,
  eventTypes: ['audit.test.*', 'config.*'],
  ...extra,
})
const post = (body: unknown) => h.api('POST', `/v1/${NS}/webhooks`, body)
const paths = (res: { body: { errors?: { path: string }[] } }) => (res.body.errors ?? []).map((e) => e.path)

describe('webhook rateLimit and headers: the API', () => {
  it('saves both, shows header values redacted, and keeps a value a PUT sends back redacted', async () => {
    h = await startHarness()
    const created = await post(
      hook({ id: 'h1', rateLimit: 2, headers: { 'X-Api-Key': 'k-123', 'X-Team': 'payments' } }),
    )
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ rateLimit: 2, headers: { 'X-Api-Key': '[REDACTED]', 'X-Team': '[REDACTED]' } })
    const read = await h.api('GET', `/v1/${NS}/webhooks/h1`)
    expect(read.body.headers).toEqual({ 'X-Api-Key': '[REDACTED]', 'X-Team': '[REDACTED]' })
    expect(JSON.stringify((await h.api('GET', `/v1/${NS}/webhooks`)).body)).not.toContain('k-123')

    // GET, edit one value, PUT back: the redacted one keeps its stored value.
    const edited = await h.api('PUT', `/v1/${NS}/webhooks/h1`, {
      ...read.body,
      headers: { ...read.body.headers, 'X-Team': 'billing' },
    })
    expect(edited.status).toBe(200)
    expect((await h.services.webhooks.get(NS, 'h1'))!.headers).toEqual({ 'X-Api-Key': 'k-123', 'X-Team': 'billing' })
    // A PUT without them removes both (PUT replaces).
    const cleared = await h.api('PUT', `/v1/${NS}/webhooks/h1`, hook())
    expect(cleared.body.rateLimit).toBeUndefined()
    expect(cleared.body.headers).toBeUndefined()
  })

  it('carries both in config.webhook.* events, header values redacted, valid against the served schema', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook({ eventTypes: ['config.*'] })
    const update = await h.api(
      'PUT',
      `/v1/${NS}/webhooks/${webhook.id}`,
      hook({ eventTypes: ['config.*'], rateLimit: 0.5, headers: { Authorization: 'Bearer s3cret' } }),
    )
    expect(update.status).toBe(200)
    await h.runFor(5_000)
    const configs = h.receiver
      .events()
      .filter((e) => e.type === 'config.webhook.updated')
      .map((e) => e.data.config)
    expect(configs.at(-1)).toMatchObject({ rateLimit: 0.5, headers: { Authorization: '[REDACTED]' } })
    expect(h.receiver.receipts.map((r) => r.body).join()).not.toContain('s3cret')
    expect(receiptProblems(h.receiver)).toEqual([])
    const schema = await (await fetch(`${h.origin}/schemas/webhook-events-v1.json`)).json()
    const config = schema.$defs.ConfigWebhookData.properties.config
    expect(config.additionalProperties).toBe(false)
    expect(config.properties.rateLimit).toEqual({ type: 'number' })
    expect(config.properties.headers).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } })
  })
})

describe('webhook rateLimit and headers: refusals', () => {
  let shared: Harness
  beforeAll(async () => {
    shared = await startHarness({ engine: false })
  })
  afterAll(async () => shared?.close())

  it.each([
    [{ rateLimit: 6 }, ['rateLimit']],
    [{ rateLimit: 0 }, ['rateLimit']],
    [{ headers: { 'Webhook-Id': 'x' } }, ['headers.Webhook-Id']],
    [{ headers: { 'webhook-signature': 'x' } }, ['headers.webhook-signature']],
    [{ headers: { 'Content-Type': 'text/plain' } }, ['headers.Content-Type']],
    [{ headers: { 'User-Agent': 'me' } }, ['headers.User-Agent']],
    [{ headers: { Connection: 'close' } }, ['headers.Connection']],
    [{ headers: { 'Transfer-Encoding': 'chunked' } }, ['headers.Transfer-Encoding']],
    [{ headers: { 'X-A': '1', 'x-a': '2' } }, ['headers.x-a']],
    [{ headers: { 'X-Bad': 'a\r\nInjected: yes' } }, ['headers.X-Bad']],
    [{ headers: { 'X Bad': 'x' } }, ['headers.X Bad']],
    [{ headers: { 'X-New': '[REDACTED]' } }, ['headers.X-New']],
    [{ headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v'])) }, ['headers']],
  ])('refuses %j with 400 naming %j', async (extra, expected) => {
    const res = await shared.api('POST', `/v1/${NS}/webhooks`, {
      name: 'hook',
      url: shared.receiver.url,
      eventTypes: ['config.*'],
      ...extra,
    })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(paths(res)).toEqual(expected)
  })

  it('refuses __proto__ as a header name with 400 and stores nothing', async () => {
    h = await startHarness({ engine: false })
    const raw = await fetch(`${h.origin}/v1/${NS}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      body: `{"id":"proto","name":"p","url":"${h.receiver.url}","eventTypes":["config.*"],"headers":{"__proto__":"x"}}`,
    })
    expect(raw.status).toBe(400)
    expect((await raw.json()).errors.map((e: { path: string }) => e.path)).toEqual(['headers.__proto__'])
    expect((await h.api('GET', `/v1/${NS}/webhooks/proto`)).status).toBe(404)
  })
})

describe('webhook rateLimit and headers: delivery', () => {
  it('sends the custom headers on every attempt, retries included', async () => {
    h = await startHarness()
    await h.createWebhook({ headers: { 'X-Api-Key': 'k-123', 'X-Team': 'payments' } })
    h.receiver.reply = (_r, i) => ({ status: i === 0 ? 503 : 200 })
    await h.appendEvents(1)
    await h.runFor(60_000)
    expect(h.receiver.receipts).toHaveLength(2)
    for (const receipt of h.receiver.receipts) {
      expect(receipt.headers['x-api-key']).toBe('k-123')
      expect(receipt.headers['x-team']).toBe('payments')
      expect(receipt.headers['user-agent']).toBe('service-d3-webhooks/1')
      expect(receipt.headers['content-type']).toBe('application/json')
    }
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('paces deliveries to the webhook rateLimit instead of WEBHOOK_RATE', async () => {
    h = await startHarness()
    await h.createWebhook({ rateLimit: 0.5 })
    // 300 events: three deliveries of 100, one every 2 s instead of all three at once.
    await h.appendEvents(300)
    await h.runUntil(T0 + 20_000)
    expect(h.receiver.receipts.map((r) => r.at - T0)).toEqual([0, 2_000, 4_000])
    expect(h.receiver.receipts.map((r) => r.json.events.length)).toEqual([100, 100, 100])
  })
})

describe.each(['memory', 'redis'] as const)('webhook headers follow their URL (%s)', (backend) => {
  it('refuses a new origin with [REDACTED] values (400, nothing changes), keeps them on a new path', async () => {
    h = await startHarness({ backend })
    // Another port on the same host is another origin: the receiver of someone else.
    const schema = await (await fetch(`${h.origin}/schemas/webhook-events-v1.json`)).json()
    const other = await new Receiver(() => h.clock.now()).start(schema)
    try {
      const created = await h.createWebhook({ eventTypes: ['audit.test.*'], headers: { 'X-Api-Key': 'k-123' } })
      const before = await h.services.webhooks.get(NS, created.id)
      const read = (await h.api('GET', `/v1/${NS}/webhooks/${created.id}`)).body
      expect(read.headers).toEqual({ 'X-Api-Key': '[REDACTED]' })

      const moved = await h.api('PUT', `/v1/${NS}/webhooks/${created.id}`, { ...read, url: other.url })
      expect(moved.status).toBe(400)
      expect(moved.headers.get('content-type')).toContain('application/problem+json')
      expect(moved.body.code).toBe('headers_required_for_new_url')
      expect(paths(moved)).toEqual(['headers.X-Api-Key'])
      expect(JSON.stringify(moved.body)).not.toContain('k-123')
      expect(await h.services.webhooks.get(NS, created.id)).toEqual(before)
      // The scheme is part of the origin too.
      const https = await h.api('PUT', `/v1/${NS}/webhooks/${created.id}`, {
        ...read,
        url: h.receiver.url.replace('http:', 'https:'),
      })
      expect(https.body.code).toBe('headers_required_for_new_url')

      // Nothing reaches the other host, and the key still goes to its own origin.
      await h.appendEvents(1)
      await h.runFor(5_000)
      expect(other.receipts).toHaveLength(0)
      expect(h.receiver.receipts.at(-1)?.headers['x-api-key']).toBe('k-123')

      // Same origin, another path: the placeholder keeps the value.
      const samePath = await h.api('PUT', `/v1/${NS}/webhooks/${created.id}`, { ...read, url: `${h.receiver.url}/v2` })
      expect(samePath.status).toBe(200)
      expect((await h.services.webhooks.get(NS, created.id))!.headers).toEqual({ 'X-Api-Key': 'k-123' })

      // A new origin with the value given again is accepted, and only that value goes there.
      const given = await h.api('PUT', `/v1/${NS}/webhooks/${created.id}`, {
        ...read,
        url: other.url,
        headers: { 'X-Api-Key': 'k-other' },
      })
      expect(given.status).toBe(200)
      other.secrets = h.receiver.secrets
      await h.appendEvents(1)
      await h.runFor(5_000)
      expect(other.receipts.map((r) => r.headers['x-api-key'])).toEqual(['k-other'])
      expect(receiptProblems(other)).toEqual([])
    } finally {
      await other.stop()
    }
  })
})
