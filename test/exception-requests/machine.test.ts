import { describe, expect, it } from 'vitest'
import { createActor, type SnapshotFrom } from 'xstate'
import {
  exceptionRequestMachine,
  type CallerFacts,
  type ExceptionRequestEvent,
} from '../../machines/exception-request.machine'

type Snapshot = SnapshotFrom<typeof exceptionRequestMachine>

const AT = '2030-01-01T00:00:00.000Z'
const requester: CallerFacts = { actor: 'alice', permissions: ['fw:access'], at: AT }
const reviewer: CallerFacts = { actor: 'rita', permissions: ['fw:read', 'fw:update:exception'], at: AT }
const reader: CallerFacts = { actor: 'carl', permissions: ['fw:read', 'fw:access'], at: AT }

const approve = (facts: CallerFacts, exceptionIdFree = true, comment?: string): ExceptionRequestEvent => ({
  type: 'APPROVE',
  ...facts,
  exceptionId: 'ex-1',
  exceptionIdFree,
  ...(comment ? { comment } : {}),
})
const deny = (facts: CallerFacts, comment?: string): ExceptionRequestEvent => ({
  type: 'DENY',
  ...facts,
  ...(comment ? { comment } : {}),
})
const withdraw = (facts: CallerFacts): ExceptionRequestEvent => ({ type: 'WITHDRAW', ...facts })

/** Runs events through a fresh actor and returns the snapshot, persisted and restored like storage does. */
function after(...events: ExceptionRequestEvent[]): Snapshot {
  const actor = createActor(exceptionRequestMachine, {
    input: { requestedBy: 'alice', requestedAt: '2029-12-31T00:00:00.000Z' },
  })
  actor.start()
  for (const event of events) actor.send(event)
  const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()))
  actor.stop()
  return createActor(exceptionRequestMachine, {
    snapshot: persisted,
    input: { requestedBy: 'x', requestedAt: 'x' },
  }).getSnapshot()
}

describe('exception request machine: transitions', () => {
  it('starts pending with the requester and request time in context', () => {
    const snapshot = after()
    expect(snapshot.value).toBe('pending')
    expect(snapshot.context).toEqual({ requestedBy: 'alice', updatedAt: '2029-12-31T00:00:00.000Z' })
  })

  it('pending -> approved records the decision and the exception id; approved is final', () => {
    const snapshot = after(approve(reviewer, true, 'ok'))
    expect(snapshot.value).toBe('approved')
    expect(snapshot.status).toBe('done')
    expect(snapshot.context).toMatchObject({
      decidedBy: 'rita',
      decidedAt: AT,
      decisionComment: 'ok',
      exceptionId: 'ex-1',
      updatedAt: AT,
    })
  })

  it('pending -> denied records the decision without an exception id', () => {
    const snapshot = after(deny(reviewer, 'no'))
    expect(snapshot.value).toBe('denied')
    expect(snapshot.context).toMatchObject({ decidedBy: 'rita', decisionComment: 'no' })
    expect(snapshot.context.exceptionId).toBeUndefined()
  })

  it('denied -> approved replaces the decision fields', () => {
    const snapshot = after(deny(reviewer, 'no'), approve({ ...reviewer, actor: 'rob' }))
    expect(snapshot.value).toBe('approved')
    expect(snapshot.context).toMatchObject({ decidedBy: 'rob', exceptionId: 'ex-1' })
    expect(snapshot.context.decisionComment).toBeUndefined()
  })

  it('pending -> withdrawn by the requester; withdrawn is final', () => {
    const snapshot = after(withdraw(requester))
    expect(snapshot.value).toBe('withdrawn')
    expect(snapshot.status).toBe('done')
    expect(snapshot.context.decidedBy).toBe('alice')
  })

  it('pending -> withdrawn by a reviewer', () => {
    expect(after(withdraw(reviewer)).value).toBe('withdrawn')
  })
})

describe('exception request machine: refusals', () => {
  it('refuses approval and denial without fw:update:exception (mayDecide)', () => {
    const pending = after()
    expect(pending.can(approve(requester))).toBe(false)
    expect(pending.can(approve(reader))).toBe(false)
    expect(pending.can(deny(reader))).toBe(false)
    expect(after(approve(reader)).value).toBe('pending')
  })

  it('refuses approval when the exception id is taken (exceptionIdFree)', () => {
    expect(after().can(approve(reviewer, false))).toBe(false)
    expect(after(approve(reviewer, false)).value).toBe('pending')
  })

  it('refuses a withdrawal by someone who is neither requester nor reviewer', () => {
    expect(after().can(withdraw(reader))).toBe(false)
    expect(after(withdraw(reader)).value).toBe('pending')
  })

  it('allows nothing once approved or withdrawn', () => {
    for (const final of [after(approve(reviewer)), after(withdraw(requester))]) {
      expect(final.can(approve(reviewer))).toBe(false)
      expect(final.can(deny(reviewer))).toBe(false)
      expect(final.can(withdraw(requester))).toBe(false)
    }
  })

  it('allows only approval from denied (no second denial, no withdrawal)', () => {
    const denied = after(deny(reviewer))
    expect(denied.can(approve(reviewer))).toBe(true)
    expect(denied.can(deny(reviewer))).toBe(false)
    expect(denied.can(withdraw(requester))).toBe(false)
    expect(denied.can(withdraw(reviewer))).toBe(false)
  })
})

describe('exception request machine: per-caller answers from can()', () => {
  it('gives the requester only withdraw, the reviewer everything, a reader nothing', () => {
    const pending = after()
    const flags = (facts: CallerFacts) => [
      pending.can(approve(facts)),
      pending.can(deny(facts)),
      pending.can(withdraw(facts)),
    ]
    expect(flags(requester)).toEqual([false, false, true])
    expect(flags(reviewer)).toEqual([true, true, true])
    expect(flags(reader)).toEqual([false, false, false])
  })
})
