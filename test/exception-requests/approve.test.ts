import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  approveExceptionRequest,
  denyExceptionRequest,
  getExceptionRequest,
  withdrawExceptionRequest,
} from '../../server/exception-requests'
import { BACKEND_KINDS } from '../support/backends'
import { FW, NS, harness, proposal, request, type Harness } from './harness'

describe.each(BACKEND_KINDS)('exception requests: approve on %s storage', (kind) => {
  let h: Harness
  beforeEach(async () => {
    h = await harness(kind)
  })
  afterEach(async () => {
    await h.close()
  })

  describe('approve', () => {
    it('adds the proposal as one new version, sets the decision fields and emits one event of each kind', async () => {
      const created = await request(h)
      const before = (await h.services.firewalls.get(NS, FW))!
      const eventsBefore = (await h.events()).length
      h.clock.advance(60_000)
      const result = await approveExceptionRequest(h.as('rita'), FW, created.id, {
        exception: proposal('ex-left-pad'),
        comment: 'fine',
      })
      expect(result.alsoApproved).toEqual([])
      expect(result.exception).toEqual(proposal('ex-left-pad'))
      expect(result.request).toMatchObject({
        id: created.id,
        status: 'approved',
        decidedBy: 'rita',
        decidedAt: '2030-01-01T00:01:00.000Z',
        decisionComment: 'fine',
        exceptionId: 'ex-left-pad',
        updatedAt: '2030-01-01T00:01:00.000Z',
        canApprove: false,
        canDeny: false,
        canWithdraw: false,
      })
      const after = (await h.services.firewalls.get(NS, FW))!
      expect(after.version).toBe(before.version + 1)
      expect(after.exceptions).toEqual([proposal('ex-left-pad')])
      const events = (await h.events()).slice(eventsBefore)
      expect(events.map((e) => e.type)).toEqual(['config.firewall.updated', 'exception-request.approved'])
      expect(events[0].data).toMatchObject({ firewall: FW, version: after.version, actor: { userId: 'rita' } })
      expect(events[1].data).toMatchObject({
        firewall: FW,
        ecosystem: 'npm',
        actor: { userId: 'rita' },
        request: { id: created.id, status: 'approved', exceptionId: 'ex-left-pad', decisionComment: 'fine' },
      })
      expect(events[1].data.request).not.toHaveProperty('canApprove')
      expect((await h.services.firewalls.getVersion(NS, FW, after.version))!.summary).toContain(created.id)
    })

    it('adds a modified exception, not the proposal', async () => {
      const created = await request(h)
      const modified = {
        ...proposal('ex-reviewed', 'left-pad', undefined),
        expires: '2030-06-01T00:00:00.000Z',
        notes: 'all versions, until June',
      }
      const result = await approveExceptionRequest(h.as('rita'), FW, created.id, { exception: modified })
      expect(result.exception).toEqual(modified)
      expect(result.request.exceptionId).toBe('ex-reviewed')
      expect(result.request.proposedException).toEqual(proposal('ex-left-pad'))
      expect((await h.services.firewalls.get(NS, FW))!.exceptions).toEqual([modified])
    })

    it('refuses a modified exception naming a rule the firewall lacks (400) and changes nothing', async () => {
      const created = await request(h)
      await expect(
        approveExceptionRequest(h.as('rita'), FW, created.id, { exception: { ...proposal('ex-1'), rule: 'nope' } }),
      ).rejects.toMatchObject({
        kind: 'invalid',
        code: 'invalid_reference',
        details: { errors: [{ path: 'exception.rule' }] },
      })
      expect((await getExceptionRequest(h.as('rita'), FW, created.id)).status).toBe('pending')
    })

    it('approves every identical pending request with it and lists them in alsoApproved', async () => {
      // Denied before dave asks again: a requester has one pending request per proposal.
      const deniedTwin = await request(h, 'dave', 'ex-twin')
      await denyExceptionRequest(h.as('rita'), FW, deniedTwin.id)
      const first = await request(h, 'alice')
      const second = await request(h, 'dave', 'ex-dave')
      const third = await request(h, 'carl', 'ex-carl')
      const otherVersion = await request(h, 'dave', 'ex-other', 'left-pad', '1.2.0')
      const eventsBefore = (await h.events()).length
      const result = await approveExceptionRequest(h.as('rita'), FW, first.id, { exception: proposal('ex-left-pad') })
      expect(result.alsoApproved.sort()).toEqual([second.id, third.id].sort())
      for (const id of [second.id, third.id]) {
        expect(await getExceptionRequest(h.as('rita'), FW, id)).toMatchObject({
          status: 'approved',
          exceptionId: 'ex-left-pad',
          decidedBy: 'rita',
        })
      }
      expect((await getExceptionRequest(h.as('rita'), FW, otherVersion.id)).status).toBe('pending')
      expect((await getExceptionRequest(h.as('rita'), FW, deniedTwin.id)).status).toBe('denied')
      const events = (await h.events()).slice(eventsBefore)
      expect(events.filter((e) => e.type === 'config.firewall.updated')).toHaveLength(1)
      const approved = events
        .filter((e) => e.type === 'exception-request.approved')
        .map((e) => (e.data.request as { id: string }).id)
      expect(approved.sort()).toEqual([first.id, second.id, third.id].sort())
      expect((await h.services.firewalls.get(NS, FW))!.exceptions).toHaveLength(1)
    })

    it('stays consistent when identical requests arrive while the approval runs', async () => {
      const first = await request(h, 'alice')
      const [result, ...settled] = await Promise.all([
        approveExceptionRequest(h.as('rita'), FW, first.id, { exception: proposal('ex-left-pad') }),
        ...['dave', 'carl', 'dave', 'carl'].map((user, i) =>
          request(h, user, `ex-${i}`).then(
            (created) => ({ created }),
            (error: unknown) => ({ error }),
          ),
        ),
      ])
      // A requester's second twin is a duplicate while the first is still pending, and a new
      // request once the approval took the first along: either is consistent.
      const twins = settled.flatMap((outcome) => ('created' in outcome ? [outcome.created] : []))
      for (const outcome of settled)
        if ('error' in outcome) expect(outcome.error).toMatchObject({ code: 'duplicate_exception_request' })
      expect(twins.length).toBeGreaterThanOrEqual(2)
      const approved = []
      for (const twin of twins) {
        const now = await getExceptionRequest(h.as('rita'), FW, twin.id)
        expect(['pending', 'approved']).toContain(now.status)
        if (now.status === 'approved') approved.push(twin.id)
      }
      expect([...result.alsoApproved].sort()).toEqual(approved.sort())
      expect((await h.events()).filter((e) => e.type === 'exception-request.approved')).toHaveLength(
        1 + approved.length,
      )
    })

    it('approves a denied request', async () => {
      const created = await request(h)
      const denied = await denyExceptionRequest(h.as('rita'), FW, created.id, 'not yet')
      expect(denied).toMatchObject({ status: 'denied', decisionComment: 'not yet', canApprove: true, canDeny: false })
      const result = await approveExceptionRequest(h.as('rita'), FW, created.id, {
        exception: proposal('ex-left-pad'),
        comment: 'ok now',
      })
      expect(result.request).toMatchObject({
        status: 'approved',
        decisionComment: 'ok now',
        exceptionId: 'ex-left-pad',
      })
    })

    it('refuses an exception id the firewall already has (409) and changes nothing', async () => {
      const created = await request(h)
      const first = await request(h, 'dave', 'ex-x', 'other')
      await approveExceptionRequest(h.as('rita'), FW, first.id, { exception: proposal('ex-taken', 'other') })
      const before = (await h.services.firewalls.get(NS, FW))!
      const eventsBefore = (await h.events()).length
      await expect(
        approveExceptionRequest(h.as('rita'), FW, created.id, { exception: proposal('ex-taken') }),
      ).rejects.toMatchObject({ kind: 'conflict', code: 'exception_exists' })
      expect(await h.services.firewalls.get(NS, FW)).toEqual(before)
      expect((await getExceptionRequest(h.as('rita'), FW, created.id)).status).toBe('pending')
      expect(await h.events()).toHaveLength(eventsBefore)
    })

    it('refuses a caller without fw:update:exception (403 naming it), the requester included', async () => {
      const created = await request(h)
      for (const user of ['alice', 'carl']) {
        await expect(
          approveExceptionRequest(h.as(user), FW, created.id, { exception: proposal('ex-left-pad') }),
        ).rejects.toMatchObject({ kind: 'forbidden', details: { permission: 'fw:update:exception' } })
      }
    })

    it('refuses an approved or withdrawn request (409 invalid_state)', async () => {
      const approved = await request(h)
      await approveExceptionRequest(h.as('rita'), FW, approved.id, { exception: proposal('ex-1') })
      const withdrawn = await request(h, 'alice', 'ex-2', 'other')
      await withdrawExceptionRequest(h.as('alice'), FW, withdrawn.id)
      for (const id of [approved.id, withdrawn.id]) {
        await expect(
          approveExceptionRequest(h.as('rita'), FW, id, { exception: proposal('ex-3') }),
        ).rejects.toMatchObject({ kind: 'conflict', code: 'invalid_state' })
      }
    })

    it('lets exactly one of two concurrent approvals win', async () => {
      const created = await request(h)
      const outcomes = await Promise.allSettled([
        approveExceptionRequest(h.as('rita'), FW, created.id, { exception: proposal('ex-a') }),
        approveExceptionRequest(h.as('rita'), FW, created.id, { exception: proposal('ex-b') }),
      ])
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
      expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({
        reason: { kind: 'conflict', code: 'invalid_state' },
      })
      expect((await h.services.firewalls.get(NS, FW))!.exceptions).toHaveLength(1)
      expect((await h.events()).filter((e) => e.type === 'exception-request.approved')).toHaveLength(1)
    })
  })
})
