import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keys } from '../../storage/repositories/keys'
import { FirewallInput, type Firewall } from '../../server/firewall/schema'
import { createUser } from '../../server/namespace/directory'
import { NS, startHarness, type Harness } from './support/harness'

let h: Harness
let reader: string
let outsider: string

beforeAll(async () => {
  h = await startHarness()
  reader = await createUser(h.services, NS, 'reader')
  outsider = await createUser(h.services, NS, 'outsider')
  const now = new Date().toISOString()
  await h.services.teams(NS).update((items) => ({
    items: items.set('readers', {
      id: 'readers',
      name: 'readers',
      permissions: ['ns:webhooks:read'],
      members: [{ userId: 'reader', addedAt: now }],
      createdAt: now,
      updatedAt: now,
    }),
    result: undefined,
  }))
  for (const id of ['main', 'legacy']) await putFirewall(id)
})
afterAll(async () => h?.close())

function putFirewall(id: string) {
  const input = FirewallInput.parse({ id })
  const next: Firewall = { ...input, id, name: id, version: 0, updatedAt: '' }
  return h.services.firewalls.mutate(NS, id, { userId: 'owner' }, new Date().toISOString(), () => ({
    next,
    summary: 'test',
    result: (stored) => stored!,
  }))
}

const base = () => ({ name: 'hook', url: h.receiver.url, eventTypes: ['firewall.*', 'config.*'] })
const events = async (type: string) =>
  (await h.backend.logs.range<any>(keys.eventLog(NS), { limit: 10_000 }))
    .map((e) => e.value)
    .filter((e) => e.type === type)

describe('webhook API', () => {
  it('creates with 201, Location and the secret in full; reads redact it', async () => {
    const created = await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), id: 'hook-1', firewalls: ['main'] })
    expect(created.status).toBe(201)
    expect(created.headers.get('location')).toBe(`/v1/${NS}/webhooks/hook-1`)
    expect(created.body).toMatchObject({
      id: 'hook-1',
      enabled: true,
      firewalls: ['main'],
      eventTypes: ['firewall.*', 'config.*'],
    })
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const listed = await h.api('GET', `/v1/${NS}/webhooks`)
    expect(listed.body.find((w: { id: string }) => w.id === 'hook-1').secret).toBe('[REDACTED]')
    expect((await h.api('GET', `/v1/${NS}/webhooks/hook-1`)).body.secret).toBe('[REDACTED]')
    expect((await h.api('GET', `/v1/${NS}/webhooks/hook-1/secret`)).body).toEqual({ secret: created.body.secret })
    expect((await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), id: 'hook-1' })).status).toBe(409)
  })

  it('emits config.webhook.* events whose config never holds a secret', async () => {
    await h.api('PUT', `/v1/${NS}/webhooks/hook-1`, { ...base(), name: 'renamed', firewalls: ['main'] })
    await h.api('POST', `/v1/${NS}/webhooks/hook-1/secret/rotate`)
    const created = await events('config.webhook.created')
    const updated = await events('config.webhook.updated')
    expect(created.at(-1).data).toMatchObject({
      webhook: 'hook-1',
      actor: { userId: 'owner' },
      config: { id: 'hook-1', name: 'hook' },
    })
    expect(updated.map((e) => e.data.config.name)).toEqual(['renamed', 'renamed'])
    expect(updated.at(-1).data.config.secretRotatedAt).toBeDefined()
    expect(updated.at(-1).data.config.previousSecretValidUntil).toBeDefined()
    const text = JSON.stringify([...created, ...updated])
    expect(text).not.toMatch(/whsec_|"secret"|previousSecret"/)
  })

  it.each([
    [['*'], 'eventTypes[0]'],
    [['webhook.*'], 'eventTypes[0]'],
    [['webhook.test'], 'eventTypes[0]'],
    [['firewall.exploded'], 'eventTypes[0]'],
    [['config.*', 'package.nope'], 'eventTypes[1]'],
    [['fire*'], 'eventTypes[0]'],
  ])('rejects eventTypes %j with 400 naming %s', async (eventTypes, path) => {
    const res = await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), eventTypes })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([path])
  })

  it('accepts open audit.* and vulnerability.* names and prefixes', async () => {
    const res = await h.api('POST', `/v1/${NS}/webhooks`, {
      ...base(),
      eventTypes: ['audit.team.*', 'audit.anything.new', 'vulnerability.found', 'exception-request.approved'],
    })
    expect(res.status).toBe(201)
  })

  it('refuses an empty eventTypes with 400 listing the families to subscribe to', async () => {
    const res = await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), eventTypes: [] })
    expect(res.status).toBe(400)
    expect(res.body.errors).toHaveLength(1)
    expect(res.body.errors[0].path).toBe('eventTypes')
    for (const family of ['firewall.*', 'audit.*', 'config.*', 'package.*', 'exception-request.*'])
      expect(res.body.errors[0].message).toContain(family)
    const created = (await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), id: 'hook-empty' })).body
    const update = await h.api('PUT', `/v1/${NS}/webhooks/${created.id}`, { ...base(), eventTypes: [] })
    expect(update.status).toBe(400)
    expect((await h.api('GET', `/v1/${NS}/webhooks/${created.id}`)).body.eventTypes).toEqual(base().eventTypes)
  })

  it('names WEBHOOK_ALLOWED_NETWORKS when it refuses a URL that is not public', async () => {
    const res = await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), url: 'http://10.1.2.3/hook' })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('url_not_public')
    expect(res.body.detail).toContain('WEBHOOK_ALLOWED_NETWORKS')
    expect(res.body.errors).toMatchObject([
      { path: 'url', message: expect.stringContaining('WEBHOOK_ALLOWED_NETWORKS') },
    ])
  })

  it('rejects an unknown firewall; a deleted one stops matching and does not block later edits', async () => {
    const unknown = await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), firewalls: ['main', 'ghost'] })
    expect(unknown.status).toBe(400)
    expect(unknown.body.errors).toEqual([{ path: 'firewalls[1]', message: 'unknown firewall "ghost"' }])

    expect((await h.api('POST', `/v1/${NS}/webhooks`, { ...base(), id: 'scoped', firewalls: ['legacy'] })).status).toBe(
      201,
    )
    await h.services.firewalls.mutate(NS, 'legacy', { userId: 'owner' }, new Date().toISOString(), () => ({
      next: null,
      summary: 'gone',
      result: () => null,
    }))
    const edit = await h.api('PUT', `/v1/${NS}/webhooks/scoped`, {
      ...base(),
      name: 'still fine',
      firewalls: ['legacy'],
    })
    expect(edit.status).toBe(200)
    expect(edit.body.firewalls).toEqual(['legacy'])
    // Adding the deleted firewall to another webhook is refused: it is unknown now.
    expect((await h.api('PUT', `/v1/${NS}/webhooks/hook-1`, { ...base(), firewalls: ['legacy'] })).status).toBe(400)
  })

  it('separates read and manage permissions', async () => {
    expect((await h.api('GET', `/v1/${NS}/webhooks`, undefined, reader)).status).toBe(200)
    expect((await h.api('GET', `/v1/${NS}/webhooks/hook-1/state`, undefined, reader)).status).toBe(200)
    const reveal = await h.api('GET', `/v1/${NS}/webhooks/hook-1/secret`, undefined, reader)
    expect(reveal.status).toBe(403)
    expect(reveal.body.permission).toBe('ns:webhooks:manage')
    expect((await h.api('POST', `/v1/${NS}/webhooks`, base(), reader)).status).toBe(403)
    expect((await h.api('POST', `/v1/${NS}/webhooks/hook-1/test`, undefined, reader)).status).toBe(403)
    expect((await h.api('DELETE', `/v1/${NS}/webhooks/hook-1`, undefined, reader)).status).toBe(403)
    expect((await h.api('GET', `/v1/${NS}/webhooks`, undefined, outsider)).status).toBe(403)
    expect((await h.api('GET', `/v1/${NS}/webhooks/hook-1/deliveries`, undefined, outsider)).status).toBe(403)
  })

  it('pages delivery records with limit, cursor and a Link header', async () => {
    const webhook = await h.createWebhook({ id: 'paged' })
    for (let i = 0; i < 5; i++) {
      await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/test`)
      await h.runFor(1_000)
    }
    const first = await h.api('GET', `/v1/${NS}/webhooks/paged/deliveries?limit=2`)
    expect(first.body).toHaveLength(2)
    const link = first.headers.get('link')!
    expect(link).toMatch(/^<\/v1\/acme\/webhooks\/paged\/deliveries\?limit=2&cursor=whdel-[^>]+>; rel="next"$/)
    const second = await h.api('GET', link.slice(1, link.indexOf('>')))
    expect(second.body).toHaveLength(2)
    expect(second.body[0].id < first.body[1].id).toBe(true)
    const one = await h.api('GET', `/v1/${NS}/webhooks/paged/deliveries/${first.body[0].id}`)
    expect(one.body).toEqual(first.body[0])
    expect((await h.api('GET', `/v1/${NS}/webhooks/paged/deliveries/whdel-missing`)).status).toBe(404)
  })

  it('answers metrics per bucket and validates the query', async () => {
    const res = await h.api('GET', `/v1/${NS}/webhooks/paged/metrics?bucket=1m`)
    expect(res.status).toBe(200)
    expect(res.body.bucket).toBe('1m')
    expect(res.body.buckets).toHaveLength(60)
    const total = res.body.buckets.reduce(
      (sum: number, b: { deliveriesSuccess: number }) => sum + b.deliveriesSuccess,
      0,
    )
    expect(total).toBe(5)
    expect(res.body.buckets.at(-1)).toEqual(
      expect.objectContaining({
        start: expect.any(String),
        eventsSent: expect.any(Number),
        avgDeliveryMillis: expect.any(Number),
      }),
    )
    expect((await h.api('GET', `/v1/${NS}/webhooks/paged/metrics?bucket=5m`)).status).toBe(400)
    expect((await h.api('GET', `/v1/${NS}/webhooks/paged/metrics?bucket=1m&since=2020-01-01T00:00:00Z`)).status).toBe(
      400,
    )
  })

  it('deletes with 204 and a config.webhook.deleted event; then 404', async () => {
    expect((await h.api('DELETE', `/v1/${NS}/webhooks/hook-1`)).status).toBe(204)
    expect((await h.api('GET', `/v1/${NS}/webhooks/hook-1`)).status).toBe(404)
    expect((await events('config.webhook.deleted')).at(-1).data.config.id).toBe('hook-1')
    expect((await h.api('POST', `/v1/${NS}/webhooks/hook-1/release`)).status).toBe(404)
  })
})
