import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  approveExceptionRequest,
  denyExceptionRequest,
  withdrawExceptionRequest,
} from '../../server/exception-requests'
import { BACKEND_KINDS } from '../support/backends'
import { FW, NS, harness, proposal, request, type Harness } from './harness'

describe.each(BACKEND_KINDS)('exception requests: deny and withdraw on %s storage', (kind) => {
  let h: Harness
  beforeEach(async () => {
    h = await harness(kind)
  })
  afterEach(async () => {
    await h.close()
  })

  describe('deny and withdraw', () => {
    it('denies with a comment and emits exception-request.denied', async () => {
      const created = await request(h)
      const denied = await denyExceptionRequest(h.as('rita'), FW, created.id, 'use right-pad')
      expect(denied).toMatchObject({ status: 'denied', decidedBy: 'rita', decisionComment: 'use right-pad' })
      const events = (await h.events()).filter((e) => e.type === 'exception-request.denied')
      expect(events).toHaveLength(1)
      expect(events[0].data).toMatchObject({
        actor: { userId: 'rita' },
        request: { status: 'denied', decisionComment: 'use right-pad' },
      })
      expect((await h.services.firewalls.get(NS, FW))!.exceptions).toEqual([])
    })

    it('refuses a second denial (409) and a denial without the permission (403)', async () => {
      const created = await request(h)
      await expect(denyExceptionRequest(h.as('carl'), FW, created.id)).rejects.toMatchObject({
        kind: 'forbidden',
        details: { permission: 'fw:update:exception' },
      })
      await denyExceptionRequest(h.as('rita'), FW, created.id)
      await expect(denyExceptionRequest(h.as('rita'), FW, created.id)).rejects.toMatchObject({
        kind: 'conflict',
        code: 'invalid_state',
      })
    })

    it('lets the requester withdraw and emits exception-request.withdrawn with the requester as actor', async () => {
      const created = await request(h)
      const withdrawn = await withdrawExceptionRequest(h.as('alice'), FW, created.id)
      expect(withdrawn).toMatchObject({ status: 'withdrawn', decidedBy: 'alice', canWithdraw: false })
      const events = (await h.events()).filter((e) => e.type === 'exception-request.withdrawn')
      expect(events.map((e) => e.data)).toMatchObject([
        { actor: { userId: 'alice' }, request: { id: created.id, status: 'withdrawn' } },
      ])
    })

    it('lets a reviewer withdraw, refuses a third user (403) and a second withdrawal (409)', async () => {
      const created = await request(h)
      await expect(withdrawExceptionRequest(h.as('carl'), FW, created.id)).rejects.toMatchObject({
        kind: 'forbidden',
        details: { permission: 'fw:update:exception' },
      })
      await withdrawExceptionRequest(h.as('rita'), FW, created.id)
      await expect(withdrawExceptionRequest(h.as('alice'), FW, created.id)).rejects.toMatchObject({
        kind: 'conflict',
        code: 'invalid_state',
      })
    })

    it('refuses withdrawing a denied or approved request (409)', async () => {
      const denied = await request(h)
      await denyExceptionRequest(h.as('rita'), FW, denied.id)
      const approved = await request(h, 'alice', 'ex-2', 'other')
      await approveExceptionRequest(h.as('rita'), FW, approved.id, { exception: proposal('ex-2', 'other') })
      for (const id of [denied.id, approved.id]) {
        await expect(withdrawExceptionRequest(h.as('alice'), FW, id)).rejects.toMatchObject({
          kind: 'conflict',
          code: 'invalid_state',
        })
      }
    })
  })
})
