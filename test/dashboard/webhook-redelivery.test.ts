import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../support/admin'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { NS, OWNER_TOKEN, eventually, signIn, startWorld, type World } from './harness'

/**
 * Resend and recover from the dashboard, against a real receiver: the forms call the API's domain
 * functions, need `ns:webhooks:manage` and a CSRF token, are audited, and show refusals plainly.
 */

/** A receiver that keeps what each request carried; `status` is what it answers. */
class RecordingReceiver {
  status = 500
  readonly receipts: { webhookId: string; eventIds: string[] }[] = []
  url = ''
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: { id: string }[] }
      this.receipts.push({
        webhookId: String(req.headers['webhook-id']),
        eventIds: body.events.map((event) => event.id),
      })
      res.writeHead(this.status).end()
    })
  })

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
    return this
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

interface Delivery {
  id: string
  status: string
  eventCount: number
  payload: string
  payloadTruncated: boolean
}

let world: World
let receiver: RecordingReceiver
let webhookId: string
let failed: Delivery
let readerToken: string

const base = () => `/v1/${NS}/webhooks/${webhookId}`
const page = (...rest: string[]) => [`/namespaces/${NS}/webhooks/${webhookId}`, ...rest].join('/')
const deliveries = async (api: Api = world.api, id = webhookId) =>
  (await api('GET', `/v1/${NS}/webhooks/${id}/deliveries`)).body as Delivery[]
const csrfOf = (p: Page) => p.locator('input[name="_csrf"]').first().getAttribute('value')
const audited = async (action: string) =>
  (await world.api('GET', `/v1/${NS}/audit?action=${action}&limit=50`)).body as {
    outcome: string
    statusCode: number
    resourceId?: string
    actorUserId?: string
    eventData?: { permission?: string }
  }[]

beforeAll(async () => {
  receiver = await new RecordingReceiver().start()
  world = await startWorld({ WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })
  // A reader: sees webhooks and their deliveries, may not manage them.
  readerToken = await createUser(world.server, 'reader', NS)
  const team = { id: 'team-ops', name: 'Ops', permissions: ['ns:webhooks:read'] }
  expect((await world.api('POST', `/v1/${NS}/teams`, team)).status).toBe(201)
  expect((await world.api('POST', `/v1/${NS}/teams/team-ops/members`, { userId: 'reader' })).status).toBe(201)
  const created = await world.api('POST', `/v1/${NS}/webhooks`, {
    name: 'Flaky',
    url: receiver.url,
    eventTypes: ['config.*'],
  })
  expect(created.status).toBe(201)
  webhookId = created.body.id
  // Its own config.webhook.created event is its first delivery: both attempts fail, then it is quarantined.
  failed = await eventually(
    async () => (await deliveries()).find((d) => d.status === 'failed'),
    20_000,
    'a failed delivery',
  )
  await eventually(
    async () => (await world.api('GET', `${base()}/state`)).body.state === 'quarantined',
    10_000,
    'quarantine',
  )
}, 60_000)
afterAll(async () => {
  await world?.close()
  await receiver?.close()
})

describe('dashboard: resend', () => {
  it('resends a failed delivery: the same event ids under a new webhook-id, shown as the new delivery', async () => {
    const original = receiver.receipts.find((r) => r.webhookId === failed.id)!
    expect(original.eventIds).toHaveLength(1)
    receiver.status = 200
    const { context, page: browser } = await signIn(world)
    await browser.goto(page('deliveries', failed.id))
    await browser.getByRole('button', { name: 'Resend' }).click()
    await browser.waitForURL((url) => /\/deliveries\/whdel-/.test(url.pathname) && !url.pathname.endsWith(failed.id))
    const resentId = browser.url().split('/').at(-1)!
    expect(await browser.getByRole('status').first().textContent()).toContain(`as ${resentId}`)
    expect(await browser.locator('h1').textContent()).toContain(resentId)
    // Quarantine applies to a resend as to any batch: it goes out once released.
    expect((await world.api('POST', `${base()}/release`)).status).toBe(200)
    const arrived = await eventually(
      async () => receiver.receipts.find((r) => r.webhookId === resentId),
      15_000,
      'the resent delivery',
    )
    expect(arrived.eventIds).toEqual(original.eventIds)
    expect(arrived.webhookId).not.toBe(failed.id)
    await eventually(
      async () => (await world.api('GET', `${base()}/deliveries/${resentId}`)).body.status === 'success',
      10_000,
      'the resent delivery recorded',
    )
    await browser.reload()
    expect(await browser.locator('#attempts tbody tr').count()).toBe(1)
    expect(await browser.locator('#attempts').textContent()).toContain('200')
    const [entry] = await audited('webhook.delivery.resend')
    expect(entry).toMatchObject({ outcome: 'success', statusCode: 303, resourceId: webhookId })
    await context.close()
  })

  it('refuses a resend without the CSRF token, or with a wrong one', async () => {
    const before = (await deliveries()).length
    const { context, page: browser } = await signIn(world)
    const action = `${page('deliveries', failed.id)}/resend`
    const missing = await browser.request.post(action, { form: {}, maxRedirects: 0 })
    expect(missing.status()).toBe(403)
    expect(await missing.text()).toContain('CSRF')
    const wrong = await browser.request.post(action, { form: { _csrf: 'not-the-token' }, maxRedirects: 0 })
    expect(wrong.status()).toBe(403)
    const recover = await browser.request.post(page('recover'), {
      form: { since: '2020-01-01T00:00' },
      maxRedirects: 0,
    })
    expect(recover.status()).toBe(403)
    expect((await deliveries()).length).toBe(before)
    await context.close()
  })
})

describe('dashboard: recover', () => {
  it('refuses a window ending before it starts, or starting in the future, next to the field', async () => {
    const before = (await deliveries()).length
    const { context, page: browser } = await signIn(world)
    await browser.goto(page())
    const form = browser.locator('#recover')
    await form.getByLabel('Since (UTC)').fill('2030-01-02T10:00')
    await form.getByLabel('Until (UTC)').fill('2030-01-01T10:00')
    let response = browser.waitForResponse((r) => r.request().method() === 'POST')
    await form.getByRole('button', { name: 'Recover failed deliveries' }).click()
    expect((await response).status()).toBe(400)
    expect(await browser.locator('#f-until-err').textContent()).toContain('must be after since')
    expect(await form.getByLabel('Since (UTC)').inputValue()).toBe('2030-01-02T10:00')

    await form.getByLabel('Until (UTC)').fill('')
    response = browser.waitForResponse((r) => r.request().method() === 'POST')
    await form.getByRole('button', { name: 'Recover failed deliveries' }).click()
    expect((await response).status()).toBe(400)
    expect(await browser.locator('#f-since-err').textContent()).toContain('must not be in the future')
    expect((await deliveries()).length).toBe(before)
    await context.close()
  })

  it('re-queues the failed delivery of the window and shows the count', async () => {
    receiver.status = 200
    const already = receiver.receipts.length
    const original = receiver.receipts.find((r) => r.webhookId === failed.id)!
    const { context, page: browser } = await signIn(world)
    await browser.goto(page())
    const form = browser.locator('#recover')
    // The prefilled window (the last day, until now) holds the failed delivery.
    expect(await form.getByLabel('Since (UTC)').inputValue()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/)
    await form.getByRole('button', { name: 'Recover failed deliveries' }).click()
    expect(await browser.getByTestId('recover-result').textContent()).toContain('1 event of failed deliveries queued')
    expect(await browser.getByTestId('recover-unavailable').count()).toBe(0)
    const arrived = await eventually(
      async () => receiver.receipts.slice(already).find((r) => r.eventIds.join() === original.eventIds.join()),
      15_000,
      'the recovered events',
    )
    expect(arrived.webhookId).not.toBe(failed.id)
    const [entry] = await audited('webhook.recover')
    expect(entry).toMatchObject({ outcome: 'success', statusCode: 200, resourceId: webhookId })
    await context.close()
  })
})

describe('dashboard: resend and recover need ns:webhooks:manage', () => {
  it('shows neither to a reader and answers their crafted posts 403, queueing nothing', async () => {
    const before = (await deliveries()).length
    const { context, page: browser } = await signIn(world, readerToken)
    await browser.goto(page('deliveries', failed.id))
    expect(await browser.locator('#attempts').count()).toBe(1)
    expect(await browser.getByRole('button', { name: 'Resend' }).count()).toBe(0)
    await browser.goto(page())
    expect(await browser.locator('#deliveries').count()).toBe(1)
    expect(await browser.locator('#recover').count()).toBe(0)
    const csrf = (await csrfOf(browser))!
    const resend = await browser.request.post(`${page('deliveries', failed.id)}/resend`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    })
    expect(resend.status()).toBe(403)
    expect(await resend.text()).toContain('ns:webhooks:manage')
    // Even an invalid window is refused for the permission first.
    const recover = await browser.request.post(page('recover'), { form: { _csrf: csrf, since: 'x' }, maxRedirects: 0 })
    expect(recover.status()).toBe(403)
    expect(await recover.text()).toContain('ns:webhooks:manage')
    expect((await deliveries()).length).toBe(before)
    const [entry] = await audited('webhook.delivery.resend')
    expect(entry).toMatchObject({
      outcome: 'failure',
      statusCode: 403,
      actorUserId: 'reader',
      eventData: { permission: 'ns:webhooks:manage' },
    })
    await context.close()
  })
})

describe('dashboard: a resend the log can no longer serve', () => {
  let short: RunningServer
  let sink: RecordingReceiver
  afterAll(async () => {
    await short?.stop()
    await sink?.close()
  })

  it('shows the 409 as a plain message on the delivery page and queues nothing', async () => {
    sink = await new RecordingReceiver().start()
    // A server whose event log keeps entries one second: the failed delivery's events are soon gone.
    short = await startServer({
      BOOTSTRAP_TOKEN: OWNER_TOKEN,
      BOOTSTRAP_NAMESPACE: NS,
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      LOG_RETENTION: '1s',
      LOG_RETENTION_INTERVAL: '500ms',
    })
    const api = apiClient(short.url, OWNER_TOKEN)
    const id = (await api('POST', `/v1/${NS}/webhooks`, { name: 'Gone', url: sink.url, eventTypes: ['config.*'] })).body
      .id as string
    const lost = await eventually(
      async () => (await deliveries(api, id)).find((d) => d.status === 'failed' && d.payload === ''),
      20_000,
      'a failed delivery whose events the log dropped',
    )
    expect(lost.payloadTruncated).toBe(true)
    const { context, page: browser } = await signIn({ ...world, server: short })
    await browser.goto(`/namespaces/${NS}/webhooks/${id}/deliveries/${lost.id}`)
    const response = browser.waitForResponse((r) => r.request().method() === 'POST')
    await browser.getByRole('button', { name: 'Resend' }).click()
    expect((await response).status()).toBe(409)
    const refusal = await browser.getByTestId('resend-refused').textContent()
    expect(refusal).toContain('Not resent')
    expect(refusal).toContain('no longer holds 1 of its events (past LOG_RETENTION)')
    expect(await browser.locator('h1').textContent()).toContain(lost.id)
    expect((await deliveries(api, id)).length).toBe(1)
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
