import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, TestReceiver, eventually, seedFirewall, signIn, startWorld, type World } from './harness'

/**
 * The operator's webhook page: a receiver on loopback fails until the webhook is quarantined;
 * after a release from the dashboard the live diagram moves from `quarantined` to delivering.
 */

let world: World
let receiver: TestReceiver
let webhookId: string

beforeAll(async () => {
  receiver = await new TestReceiver().start()
  world = await startWorld({ WEBHOOK_RETRY_SCHEDULE: '100ms,100ms', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })
  await seedFirewall(world.api, 'main')
  const created = await world.api('POST', `/v1/${NS}/webhooks`, {
    name: 'Audit sink',
    url: receiver.url,
    eventTypes: ['config.*'],
  })
  expect(created.status).toBe(201)
  webhookId = created.body.id
})
afterAll(async () => {
  await world?.close()
  await receiver?.close()
})

const state = async () => (await world.api('GET', `/v1/${NS}/webhooks/${webhookId}/state`)).body

describe('dashboard: webhooks', () => {
  it('shows a quarantined webhook, then releases it and watches the diagram move to delivering', async () => {
    // A configuration change produces an event; three failed attempts quarantine the webhook.
    await world.api('PUT', `/v1/${NS}/config/main/rules/no-scripts`, {
      executionPhase: 'download',
      selector: { function: { name: 'installScripts' } },
    })
    await eventually(async () => (await state()).state === 'quarantined', 20_000, 'quarantine')
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}`)
    const figure = page.locator('figure.diagram')
    expect(await page.getByTestId('webhook-state').textContent()).toBe('quarantined')
    expect(await figure.locator('[data-state="quarantined"]').getAttribute('class')).toContain('is-active')
    const deliveries = page.locator('#deliveries')
    expect(await deliveries.textContent()).toContain('failed')
    await deliveries.locator('summary').first().click()
    expect(await deliveries.textContent()).toContain('dashboard-test')

    // While quarantined, a test send buffers; the receiver now answers slowly so `sending` is visible.
    await page.getByRole('button', { name: 'Send test event' }).click()
    expect(await page.getByRole('status').first().textContent()).toContain('queued')
    await eventually(async () => (await state()).bufferedEvents >= 1, 10_000, 'buffered test event')
    receiver.status = 200
    receiver.delayMs = 2500
    await page.reload()
    await eventually(
      async () => (await page.locator('figure.diagram').getAttribute('class'))?.includes('is-live'),
      10_000,
      'live stream',
    )
    await page.getByRole('button', { name: 'Release quarantine' }).click()
    await page.waitForURL(`**/webhooks/${webhookId}`)
    await eventually(
      async () => /delivering/.test((await figure.getAttribute('data-seen')) ?? ''),
      15_000,
      'diagram showing delivering',
    )
    const seen = (await figure.getAttribute('data-seen')) ?? ''
    expect(seen).toMatch(/delivering\.(preparing|sending)/)
    await eventually(async () => (await figure.getAttribute('data-live-state')) === 'active', 15_000, 'back to active')
    expect(await figure.locator('[data-state="quarantined"]').getAttribute('class')).not.toContain('is-active')
    expect(await page.locator('[data-live-field="state"]').first().textContent()).toBe('active')
    await context.close()
  })

  it('reveals and rotates the signing secret', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}`)
    await page.getByRole('button', { name: 'Reveal secret' }).click()
    const revealed = (await page.getByTestId('secret').textContent())!.trim()
    expect(revealed).toMatch(/^whsec_/)
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    const rotated = (await page.getByTestId('secret').textContent())!.trim()
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(revealed)
    expect(await page.locator('#secret').textContent()).toContain('previous secret keeps signing')
    expect((await world.api('GET', `/v1/${NS}/webhooks/${webhookId}/secret`)).body.secret).toBe(rotated)
    await context.close()
  })

  it('draws delivery metrics as charts', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}?bucket=1m`)
    const charts = page.locator('#metrics svg.chart')
    expect(await charts.count()).toBe(2)
    expect(await charts.first().getAttribute('aria-label')).toMatch(/failed: [1-9]/)
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
