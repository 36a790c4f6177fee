import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, TestReceiver, eventually, seedFirewall, signIn, startWorld, type World } from './harness'

/** The operator edits, disables, enables and deletes webhooks from the dashboard, and reads the event catalog. */

let world: World
let receiver: TestReceiver
let webhookId: string

beforeAll(async () => {
  receiver = await new TestReceiver().start()
  receiver.status = 200
  world = await startWorld({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })
  await seedFirewall(world.api, 'main')
  await seedFirewall(world.api, 'other')
  const created = await world.api('POST', `/v1/${NS}/webhooks`, {
    name: 'Ops sink',
    url: receiver.url,
    eventTypes: ['config.*'],
    headers: { 'X-Env': 'prod' },
  })
  expect(created.status).toBe(201)
  webhookId = created.body.id
})
afterAll(async () => {
  await world?.close()
  await receiver?.close()
})

const stored = async () => (await world.api('GET', `/v1/${NS}/webhooks/${webhookId}`)).body

describe('dashboard: managing webhooks', () => {
  it('edits name, event types, firewall scope and rate limit, keeping the custom headers', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}`)
    await page.getByRole('link', { name: 'Edit', exact: true }).click()
    expect(await page.getByLabel('config.*', { exact: true }).isChecked()).toBe(true)
    await page.getByLabel('Name', { exact: true }).fill('Security sink')
    await page.getByLabel('config.*', { exact: true }).uncheck()
    await page.getByLabel('firewall.*', { exact: true }).check()
    await page.getByLabel('exception-request.approved', { exact: true }).check()
    await page.getByLabel('Other event types').fill('audit.team.*')
    await page.getByLabel('main', { exact: true }).check()
    await page.getByLabel('Rate limit (deliveries per second)').fill('2')
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await page.waitForURL(`**/webhooks/${webhookId}`)
    expect(await page.getByRole('status').first().textContent()).toContain('Security sink saved')
    expect(await stored()).toMatchObject({
      name: 'Security sink',
      url: receiver.url,
      enabled: true,
      eventTypes: ['firewall.*', 'exception-request.approved', 'audit.team.*'],
      firewalls: ['main'],
      rateLimit: 2,
      headers: { 'X-Env': '[REDACTED]' },
    })
    // The edit form shows what is stored, the unlisted prefix in the free field.
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
    expect(await page.getByLabel('Other event types').inputValue()).toBe('audit.team.*')
    expect(await page.getByLabel('other', { exact: true }).isChecked()).toBe(false)
    await context.close()
  })

  it('edits the custom headers: a stored value kept by its placeholder, one added, one removed', async () => {
    const { context, page } = await signIn(world)
    const edit = async (lines: string) => {
      await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
      await page.getByLabel('Custom headers').fill(lines)
      await page.getByRole('button', { name: 'Save webhook' }).click()
      await page.waitForURL(`**/webhooks/${webhookId}`)
    }
    const delivered = async () => {
      const before = receiver.headers.length
      expect((await world.api('POST', `/v1/${NS}/webhooks/${webhookId}/test`)).status).toBe(202)
      await eventually(async () => receiver.headers.length > before, 15_000, 'a test delivery')
      return receiver.headers.at(-1)!
    }
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
    expect(await page.getByLabel('Custom headers').inputValue()).toBe('X-Env: [REDACTED]')

    await edit('X-Env: [REDACTED]\nX-Team: payments')
    expect((await stored()).headers).toEqual({ 'X-Env': '[REDACTED]', 'X-Team': '[REDACTED]' })
    expect(await delivered()).toMatchObject({ 'x-env': 'prod', 'x-team': 'payments' })

    await edit('X-Team: [REDACTED]')
    expect((await stored()).headers).toEqual({ 'X-Team': '[REDACTED]' })
    const kept = await delivered()
    expect(kept['x-team']).toBe('payments')
    expect(kept['x-env']).toBeUndefined()

    await edit('X-Env: staging')
    expect((await stored()).headers).toEqual({ 'X-Env': '[REDACTED]' })
    const replaced = await delivered()
    expect(replaced['x-env']).toBe('staging')
    expect(replaced['x-team']).toBeUndefined()
    await context.close()
  })

  it('refuses a header line without a colon, or a header the sender owns, next to the field', async () => {
    const before = await stored()
    const { context, page } = await signIn(world)
    for (const lines of ['X-Team payments', 'X-Team: [REDACTED]\nWebhook-Id: mine']) {
      await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
      await page.getByLabel('Custom headers').fill(lines)
      const response = page.waitForResponse((r) => r.request().method() === 'POST')
      await page.getByRole('button', { name: 'Save webhook' }).click()
      expect((await response).status()).toBe(400)
      expect(await page.locator('#f-headers-err').textContent()).toMatch(/line 1: expected|set by the sender/)
      expect(await page.getByLabel('Custom headers').inputValue()).toBe(lines)
    }
    expect(await stored()).toEqual(before)
    await context.close()
  })

  it('refuses a new origin for a stored header value kept by its placeholder, and changes nothing', async () => {
    const other = await new TestReceiver().start()
    try {
      const before = await stored()
      expect(before.headers).toEqual({ 'X-Env': '[REDACTED]' })
      const { context, page } = await signIn(world)
      await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
      await page.getByLabel('Receiver URL').fill(other.url)
      expect(await page.getByLabel('Custom headers').inputValue()).toBe('X-Env: [REDACTED]')
      const response = page.waitForResponse((r) => r.request().method() === 'POST')
      await page.getByRole('button', { name: 'Save webhook' }).click()
      expect((await response).status()).toBe(400)
      expect(await page.locator('#f-headers-err').textContent()).toContain('origin')
      expect(await page.getByLabel('Receiver URL').inputValue()).toBe(other.url)
      expect(await stored()).toEqual(before)
      // The test delivery still goes to the stored URL, and nothing to the other host.
      const hits = receiver.hits
      expect((await world.api('POST', `/v1/${NS}/webhooks/${webhookId}/test`)).status).toBe(202)
      await eventually(async () => receiver.hits > hits, 15_000, 'a test delivery')
      expect(other.hits).toBe(0)
      await context.close()
    } finally {
      await other.close()
    }
  })

  it('shows refused input next to its field and changes nothing', async () => {
    const before = await stored()
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
    await page.getByLabel('Receiver URL').fill('ftp://hooks.example.com/x')
    await page.getByLabel('Other event types').fill('webhook.*')
    const response = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Save webhook' }).click()
    expect((await response).status()).toBe(400)
    expect(await page.locator('#f-url-err').isVisible()).toBe(true)
    expect(await page.locator('#f-eventTypes-err').textContent()).toContain('cannot be subscribed')
    expect(await page.getByLabel('Receiver URL').inputValue()).toBe('ftp://hooks.example.com/x')
    expect(await stored()).toEqual(before)
    await context.close()
  })

  it('disables and enables a webhook', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}`)
    await page.getByRole('button', { name: 'Disable' }).click()
    await page.waitForURL(`**/webhooks/${webhookId}`)
    expect((await stored()).enabled).toBe(false)
    expect(await page.locator('#main').textContent()).toContain('disabled')
    await page.getByRole('button', { name: 'Enable' }).click()
    await page.waitForURL(`**/webhooks/${webhookId}`)
    const after = await stored()
    expect(after.enabled).toBe(true)
    expect(after.eventTypes).toEqual(['firewall.*', 'exception-request.approved', 'audit.team.*'])
    expect(after.headers).toEqual({ 'X-Env': '[REDACTED]' })
    await context.close()
  })

  it('deletes a webhook', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/edit`)
    await page.getByRole('button', { name: 'Delete webhook' }).click()
    await page.waitForURL(`**/namespaces/${NS}/webhooks`)
    expect(await page.getByRole('status').first().textContent()).toContain(`${webhookId} deleted`)
    expect((await world.api('GET', `/v1/${NS}/webhooks/${webhookId}`)).status).toBe(404)
    await context.close()
  })
})

describe('dashboard: event catalog', () => {
  it('lists every event type of the published schema with its description and data schema', async () => {
    const document = await (await fetch(`${world.server.url}/schemas/webhook-events-v1.json`)).json()
    const rules = document.$defs.Event.allOf as {
      description: string
      if: { properties: { type: { const?: string } } }
      then: { properties: { data: { $ref: string } } }
    }[]
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks`)
    await page.getByRole('link', { name: 'Event types' }).click()
    const sections = page.locator('[data-event-type]')
    expect(await sections.count()).toBe(rules.length)
    for (const rule of rules) {
      const type = rule.if.properties.type.const ?? 'audit.*'
      expect(rule.description, type).toBeTruthy()
      const section = page.locator(`[data-event-type="${type}"]`)
      expect(await section.locator('p').first().textContent()).toBe(rule.description)
      const def = rule.then.properties.data.$ref.replace('#/$defs/', '')
      const shown = JSON.parse((await section.locator('pre').textContent())!)
      expect(shown, type).toEqual(document.$defs[def])
    }
    expect(await page.locator('[data-event-type="firewall.blocked"]').textContent()).toContain('request id')
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
