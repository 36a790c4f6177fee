import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { waitFor } from '../support/wait-for'
import { Receiver } from './support/receiver'

/**
 * The case on the built server: a valid ~805 KB firewall PUT becomes one
 * `config.firewall.updated` event; it reaches a real receiver on loopback in a body within
 * 512 KB that validates against the served schema, and the API returns the event whole by id.
 */

let server: RunningServer
let receiver: Receiver
let owner: Api

beforeAll(async () => {
  server = await startServer({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })
  owner = apiClient(server.url, bootstrapToken(server))
  const schema = await (await fetch(`${server.url}/schemas/webhook-events-v1.json`)).json()
  receiver = await new Receiver().start(schema)
}, 60_000)
afterAll(async () => {
  await receiver?.stop()
  await server?.stop()
})

/** Four rules of 1,000 name patterns of 202 characters: about 820 KB as JSON, every part within its bound. */
function bigFirewall() {
  const rules = Array.from({ length: 4 }, (_, r) => ({
    id: `names-${r}`,
    executionPhase: 'download',
    selector: {
      function: {
        name: 'packageName',
        patterns: Array.from({ length: 1000 }, (_, p) => `pkg-${r}-${p}-`.padEnd(202, 'x')),
      },
    },
  }))
  return {
    ecosystem: 'npm',
    name: 'Big',
    upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
    rules,
    exceptions: [],
    permissions: { everybody: ['fw:access'] },
  }
}

describe('an 805 KB firewall change, delivered (built server)', () => {
  it('arrives cut within 512 KB, schema-valid, and GET /v1/{ns}/events/{id} returns it whole', async () => {
    const created = await owner('POST', '/v1/default/webhooks', {
      name: 'sink',
      url: receiver.url,
      eventTypes: ['config.firewall.*'],
    })
    expect(created.status).toBe(201)
    receiver.secrets = [created.body.secret]
    const body = bigFirewall()
    expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(800 * 1024)
    const put = await owner('PUT', '/v1/default/config/big', body)
    expect(put.status).toBe(201)

    await waitFor(() => receiver.events().length > 0, 30_000, 'the config event delivered')
    const [receipt] = receiver.receipts
    expect(Buffer.byteLength(receipt.body)).toBeLessThanOrEqual(512 * 1024)
    expect(receipt.schemaErrors).toEqual([])
    expect(receipt.verifiedWith).toEqual([0])
    const [event] = receipt.json.events as (Record<string, any> & { id: string })[]
    expect(event).toMatchObject({ type: 'config.firewall.created', payloadTruncated: true })
    expect(event.data).toMatchObject({ firewall: 'big', version: 1, ecosystem: 'npm' })

    const whole = await owner('GET', `/v1/default/events/${event.id}`)
    expect(whole.status).toBe(200)
    expect(whole.body).not.toHaveProperty('payloadTruncated')
    expect(whole.body.data.config.rules.map((rule: { id: string }) => rule.id)).toEqual([
      'names-0',
      'names-1',
      'names-2',
      'names-3',
    ])
    expect(whole.body.data.config.rules[3].selector).toEqual(body.rules[3].selector)
    expect(Buffer.byteLength(JSON.stringify(whole.body))).toBeGreaterThan(800 * 1024)

    // Reading any event needs ns:webhooks:manage (which can subscribe to every event anyway).
    const reader = await owner('POST', '/v1/default/tokens/service', { name: 'r', permissions: ['ns:webhooks:read'] })
    expect(reader.status).toBe(201)
    const refused = await apiClient(server.url, reader.body.token)('GET', `/v1/default/events/${event.id}`)
    expect([refused.status, refused.body.code]).toEqual([403, 'permission_denied'])
    expect(JSON.stringify(refused.body)).not.toContain('names-0')
  }, 60_000)
})
