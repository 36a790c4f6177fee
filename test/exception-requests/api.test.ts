import { eventually as waitUntilRead } from '../support/wait-for'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'
import { readEvents } from '../support/events'

const TOKEN = 'fwp_exceptionRequestApiTest0000000000000001'
const BASE = '/v1/default/config/fw/exception-requests'
const proposal = (id: string, packageName = 'left-pad') => ({
  id,
  rule: 'no-malware',
  selector: { packageName, version: '1.3.0' },
})

/** Reads until `done` holds: the audit entry is written after the response is sent. */
const eventually = <T>(read: () => Promise<T>, done: (value: T) => boolean) =>
  waitUntilRead(read, { accept: done, what: 'the awaited state' })

describe('exception requests over HTTP', () => {
  let server: RunningServer
  let owner: Api
  let alice: Api
  let rita: Api
  let carl: Api
  beforeAll(async () => {
    server = await startServer({ BOOTSTRAP_TOKEN: TOKEN, DASHBOARD_URL: 'https://dash.example' })
    owner = apiClient(server.url, TOKEN)
    const [a, r, c] = await Promise.all(['alice', 'rita', 'carl'].map((user) => createUser(server, user)))
    ;[alice, rita, carl] = [a, r, c].map((token) => apiClient(server.url, token))
    const created = await owner('PUT', '/v1/default/config/fw', {
      rules: [{ id: 'no-malware', executionPhase: 'download', selector: { function: { name: 'malware' } } }],
      permissions: { alice: ['fw:access'], rita: ['fw:read', 'fw:update:exception'], carl: ['fw:read', 'fw:access'] },
    })
    expect(created.status).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('creates with 201 and a Location that reads the request back; requestedBy is the token', async () => {
    const res = await alice('POST', BASE, {
      proposedException: proposal('ex-1'),
      justification: 'false positive',
      requestedBy: 'carl',
    })
    expect(res.status).toBe(201)
    expect(res.headers.get('location')).toBe(`${BASE}/${res.body.id}`)
    expect(res.body).toMatchObject({
      status: 'pending',
      requestedBy: 'alice',
      canApprove: false,
      canDeny: false,
      canWithdraw: true,
    })
    const read = await alice('GET', res.headers.get('location')!)
    expect(read).toMatchObject({ status: 200, body: res.body })
    const event = (await readEvents(server)).find(
      (e) => e.type === 'exception-request.created' && (e.data.request as { id: string }).id === res.body.id,
    )
    expect(event?.data.dashboardUrl).toBe(
      `https://dash.example/namespaces/default/firewalls/fw/exception-requests/${res.body.id}`,
    )
  })

  it('answers 400 with errors for an invalid proposal or an unknown rule', async () => {
    const bad = await alice('POST', BASE, {
      proposedException: { rule: 'no-malware', selector: {} },
      justification: 'x',
    })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining(['proposedException.id']),
    )
    const unknown = await alice('POST', BASE, {
      proposedException: { ...proposal('ex-1'), rule: 'nope' },
      justification: 'x',
    })
    expect(unknown).toMatchObject({ status: 400, body: { code: 'invalid_reference' } })
  })

  it('refuses an approval without fw:update:exception with 403 naming it, in the problem and the audit event', async () => {
    const created = await alice('POST', BASE, { proposedException: proposal('ex-2', 'pkg-403'), justification: 'x' })
    const res = await alice('POST', `${BASE}/${created.body.id}/approve`, { exception: proposal('ex-2', 'pkg-403') })
    expect(res.status).toBe(403)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.body).toMatchObject({ code: 'permission_denied', permission: 'fw:update:exception' })
    const audit = await eventually(
      () => owner('GET', '/v1/default/audit?action=exception-request.approve&outcome=failure'),
      (r) => r.body.some((entry: { resourceId?: string }) => entry.resourceId === created.body.id),
    )
    expect(audit.body.find((entry: { resourceId?: string }) => entry.resourceId === created.body.id)).toMatchObject({
      action: 'exception-request.approve',
      outcome: 'failure',
      statusCode: 403,
      actorUserId: 'alice',
      resourceType: 'exception-request',
      eventData: { permission: 'fw:update:exception' },
    })
    const events = await readEvents(server)
    expect(
      events.find((e) => e.type === 'audit.exception-request.approve' && e.data.resourceId === created.body.id)?.data,
    ).toMatchObject({ eventData: { permission: 'fw:update:exception' } })
  })

  it('approves with the documented approval answer, then refuses a second approval with 409 invalid_state', async () => {
    const created = await alice('POST', BASE, { proposedException: proposal('ex-3', 'pkg-ok'), justification: 'x' })
    const twin = await carl('POST', BASE, { proposedException: proposal('ex-twin', 'pkg-ok'), justification: 'me too' })
    const res = await rita('POST', `${BASE}/${created.body.id}/approve`, {
      exception: proposal('ex-3', 'pkg-ok'),
      comment: 'ok',
    })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['alsoApproved', 'exception', 'request'])
    expect(res.body).toMatchObject({
      request: { id: created.body.id, status: 'approved', decisionComment: 'ok', exceptionId: 'ex-3' },
      exception: { id: 'ex-3' },
      alsoApproved: [twin.body.id],
    })
    const again = await rita('POST', `${BASE}/${created.body.id}/approve`, { exception: proposal('ex-4', 'pkg-ok') })
    expect(again).toMatchObject({ status: 409, body: { code: 'invalid_state' } })
    const firewall = await owner('GET', '/v1/default/config/fw')
    expect(firewall.body.exceptions.map((e: { id: string }) => e.id)).toContain('ex-3')
  })

  it('denies with a comment, withdraws with an empty body, and refuses a third user with 403', async () => {
    const one = await alice('POST', BASE, { proposedException: proposal('ex-5', 'pkg-deny'), justification: 'x' })
    expect((await carl('POST', `${BASE}/${one.body.id}/deny`, { comment: 'no' })).status).toBe(403)
    const denied = await rita('POST', `${BASE}/${one.body.id}/deny`, { comment: 'no' })
    expect(denied).toMatchObject({ status: 200, body: { status: 'denied', decisionComment: 'no', canApprove: true } })
    const two = await alice('POST', BASE, { proposedException: proposal('ex-6', 'pkg-wd'), justification: 'x' })
    expect((await carl('POST', `${BASE}/${two.body.id}/withdraw`)).body).toMatchObject({
      code: 'permission_denied',
      permission: 'fw:update:exception',
    })
    const withdrawn = await alice('POST', `${BASE}/${two.body.id}/withdraw`, {})
    expect(withdrawn).toMatchObject({ status: 200, body: { status: 'withdrawn', canWithdraw: false } })
    expect((await alice('POST', `${BASE}/${two.body.id}/withdraw`)).status).toBe(409)
    expect((await alice('POST', `${BASE}/${two.body.id}/withdraw`, { reason: 'x' })).status).toBe(400)
  })

  it('lists by status with ?limit= paging through the Link header; a requester sees only their own', async () => {
    const all = await carl('GET', `${BASE}?status=pending,approved`)
    expect(all.status).toBe(200)
    expect(all.body.length).toBeGreaterThan(2)
    expect(all.body.every((r: { status: string }) => ['pending', 'approved'].includes(r.status))).toBe(true)
    const first = await carl('GET', `${BASE}?status=pending,approved&limit=2`)
    const link = first.headers.get('link')!
    expect(link).toMatch(/^<\/v1\/default\/config\/fw\/exception-requests\?.*cursor=.*>; rel="next"$/)
    const next = await carl('GET', link.slice(1, link.indexOf('>')))
    expect(next.body[0].id).toBe(all.body[2].id)
    const own = await alice('GET', BASE)
    expect(own.body.every((r: { requestedBy: string }) => r.requestedBy === 'alice')).toBe(true)
    expect((await carl('GET', `${BASE}?status=bogus`)).status).toBe(400)
  })

  it('describes every operation in the OpenAPI document', async () => {
    const doc = await (await fetch(`${server.url}/v1/openapi.json`)).json()
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/{ns}/config/{fw}/exception-requests',
        '/v1/{ns}/config/{fw}/exception-requests/{id}',
        '/v1/{ns}/config/{fw}/exception-requests/{id}/approve',
        '/v1/{ns}/config/{fw}/exception-requests/{id}/deny',
        '/v1/{ns}/config/{fw}/exception-requests/{id}/withdraw',
      ]),
    )
  })
})
