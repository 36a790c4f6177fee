import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createExceptionRequest, denyExceptionRequest, getExceptionRequest } from '../../server/exception-requests'
import { putFirewall } from '../../server/firewall/commands'
import { BACKEND_KINDS } from '../support/backends'
import { DASHBOARD, FW, NS, harness, list, proposal, request, type Harness } from './harness'

describe.each(BACKEND_KINDS)('exception requests: create and read on %s storage', (kind) => {
  let h: Harness
  beforeEach(async () => {
    h = await harness(kind)
  })
  afterEach(async () => {
    await h.close()
  })

  describe('create', () => {
    it('creates a pending request whose requester is the caller, and emits exception-request.created', async () => {
      const body = { proposedException: proposal('ex-1'), justification: 'false positive', requestedBy: 'mallory' }
      const created = await createExceptionRequest(h.as('alice'), FW, body as never)
      expect(created).toMatchObject({
        firewallId: FW,
        status: 'pending',
        requestedBy: 'alice',
        justification: 'false positive',
        proposedException: proposal('ex-1'),
      })
      expect(created.id).toMatch(/^exr-/)
      expect(created.requestedAt).toBe('2030-01-01T00:00:00.000Z')
      expect(created.updatedAt).toBe(created.requestedAt)
      expect(created).not.toHaveProperty('decidedBy')
      const events = (await h.events()).filter((e) => e.type === 'exception-request.created')
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({
        namespace: NS,
        data: {
          firewall: FW,
          ecosystem: 'npm',
          actor: { userId: 'alice' },
          dashboardUrl: `${DASHBOARD}/namespaces/${NS}/firewalls/${FW}/exception-requests/${created.id}`,
        },
      })
      const { canApprove, canDeny, canWithdraw, ...data } = created
      expect(events[0].data.request).toEqual(data)
      expect([canApprove, canDeny, canWithdraw]).toEqual([false, false, true])
    })

    it('refuses a caller without fw:access (403 naming it)', async () => {
      await expect(request(h, 'rita')).rejects.toMatchObject({
        kind: 'forbidden',
        details: { permission: 'fw:access' },
      })
    })

    it('answers 404 to a caller who holds nothing on the firewall', async () => {
      await expect(request(h, 'zed')).rejects.toMatchObject({ kind: 'not_found', code: 'firewall_not_found' })
    })

    it('refuses a proposal for a rule the firewall does not have', async () => {
      const body = { proposedException: { ...proposal('ex-1'), rule: 'nope' }, justification: 'x' }
      await expect(createExceptionRequest(h.as('alice'), FW, body)).rejects.toMatchObject({
        kind: 'invalid',
        code: 'invalid_reference',
      })
    })

    it('accepts a rule the firewall inherits from a base', async () => {
      await putFirewall(h.as('owner'), 'base', {
        ecosystem: 'npm',
        description: '',
        upstreams: [],
        exceptions: [],
        permissions: {},
        extends: [],
        rules: [
          {
            id: 'base-rule',
            executionPhase: 'download',
            selector: { function: { name: 'deprecated' } },
            ruleEffect: { block: true, log: true },
            description: '',
          },
        ],
      })
      const current = (await h.services.firewalls.get(NS, FW))!
      await putFirewall(h.as('owner'), FW, { ...current, extends: ['base'] } as never)
      const created = await createExceptionRequest(h.as('alice'), FW, {
        proposedException: { ...proposal('ex-1'), rule: 'base-rule' },
        justification: 'x',
      })
      expect(created.status).toBe('pending')
    })
  })

  describe('read', () => {
    it('lists all for fw:read, only their own for a requester with fw:access, filtered by status and paged', async () => {
      const a1 = await request(h, 'alice', 'ex-a1', 'a')
      h.clock.advance(1)
      const d1 = await request(h, 'dave', 'ex-d1', 'd')
      h.clock.advance(1)
      const a2 = await request(h, 'alice', 'ex-a2', 'b')
      await denyExceptionRequest(h.as('rita'), FW, a2.id, 'no')
      expect((await list(h, 'carl')).items.map((r) => r.id)).toEqual([a1.id, d1.id, a2.id])
      expect((await list(h, 'alice')).items.map((r) => r.id)).toEqual([a1.id, a2.id])
      expect((await list(h, 'rita', { status: ['denied'] })).items.map((r) => r.id)).toEqual([a2.id])
      const first = await list(h, 'carl', { limit: 2 })
      expect(first.items.map((r) => r.id)).toEqual([a1.id, d1.id])
      expect(first.next).toBe(d1.id)
      const second = await list(h, 'carl', { limit: 2, cursor: first.next! })
      expect(second).toEqual({ items: [expect.objectContaining({ id: a2.id })], next: null })
    })

    it("hides another requester's request from a caller with only fw:access (404)", async () => {
      const created = await request(h, 'alice')
      await expect(getExceptionRequest(h.as('dave'), FW, created.id)).rejects.toMatchObject({
        kind: 'not_found',
        code: 'exception_request_not_found',
      })
      expect((await getExceptionRequest(h.as('carl'), FW, created.id)).id).toBe(created.id)
    })

    it('computes the flags per caller: requester, reviewer, third user', async () => {
      const created = await request(h, 'alice')
      const flags = async (user: string) => {
        const { canApprove, canDeny, canWithdraw } = await getExceptionRequest(h.as(user), FW, created.id)
        return { canApprove, canDeny, canWithdraw }
      }
      expect(await flags('alice')).toEqual({ canApprove: false, canDeny: false, canWithdraw: true })
      expect(await flags('rita')).toEqual({ canApprove: true, canDeny: true, canWithdraw: true })
      expect(await flags('carl')).toEqual({ canApprove: false, canDeny: false, canWithdraw: false })
      await denyExceptionRequest(h.as('rita'), FW, created.id, 'no')
      expect(await flags('alice')).toEqual({ canApprove: false, canDeny: false, canWithdraw: false })
      expect(await flags('rita')).toEqual({ canApprove: true, canDeny: false, canWithdraw: false })
    })
  })
})
