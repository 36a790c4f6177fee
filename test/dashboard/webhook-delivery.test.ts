import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, eventually, signIn, startWorld, type World } from './harness'

/** A delivery's own page: the record, every attempt, and (for managers) resend. */

let world: World
let receiver: Server
let receiverUrl: string
let webhookId: string
const answers = [500, 200]
let calls = 0

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const status = answers[Math.min(calls++, answers.length - 1)]
      res.writeHead(status).end(status === 500 ? 'receiver broke' : 'fine')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  world = await startWorld({ WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })
  const created = await world.api('POST', `/v1/${NS}/webhooks`, {
    name: 'Sink',
    url: receiverUrl,
    eventTypes: ['config.*'],
  })
  expect(created.status).toBe(201)
  webhookId = created.body.id
})
afterAll(async () => {
  await world?.close()
  await new Promise((resolve) => receiver?.close(resolve))
})

const deliveries = async () =>
  (await world.api('GET', `/v1/${NS}/webhooks/${webhookId}/deliveries`)).body as { id: string; status: string }[]

describe('dashboard: a delivery and its attempts', () => {
  it('links a delivery from the webhook page to its attempts', async () => {
    // The webhook's own config.webhook.created event is its first delivery: 500, then 200.
    await eventually(
      async () => (await deliveries()).some((d) => d.status === 'success'),
      20_000,
      'delivered on the second attempt',
    )
    const [record] = await deliveries()
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/webhooks/${webhookId}`)
    const row = page.locator('#deliveries tr', { hasText: record.id })
    await row.locator('summary').click()
    await row.getByRole('link', { name: 'All attempts' }).click()
    await page.waitForURL(`**/deliveries/${record.id}`)
    const rows = page.locator('#attempts tbody tr')
    expect(await rows.count()).toBe(2)
    expect(await rows.nth(0).textContent()).toContain('500')
    expect(await rows.nth(1).textContent()).toContain('200')
    await rows.nth(0).locator('summary').click()
    expect(await rows.nth(0).textContent()).toContain('receiver broke')
    expect(await page.locator('#payload').textContent()).toContain('config.webhook.created')
    expect((await page.goto(`/namespaces/${NS}/webhooks/${webhookId}/deliveries/whdel-missing`))?.status()).toBe(404)
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
