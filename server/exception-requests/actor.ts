import { createActor, type SnapshotFrom } from 'xstate'
import type { Exception } from '../firewall/schema'
import {
  DECIDE_PERMISSION,
  exceptionRequestMachine,
  type CallerFacts,
  type ExceptionRequestEvent,
  type ExceptionRequestStatus,
} from '../../machines/exception-request.machine'
import { conflict, forbidden } from '../common/errors'
import type { StoredExceptionRequest } from '../../storage/repositories/exception-requests'
import type { ExceptionRequest, ExceptionRequestView } from './model'

/**
 * The bridge between stored requests and their actors: every decision restores the actor from
 * its persisted snapshot, sends one event and persists the next snapshot. Nothing here does I/O.
 */

type RequestSnapshot = SnapshotFrom<typeof exceptionRequestMachine>

/** The persisted snapshot of a new request's actor (status `pending`). */
export function initialSnapshot(requestedBy: string, requestedAt: string): unknown {
  return createActor(exceptionRequestMachine, { input: { requestedBy, requestedAt } }).getPersistedSnapshot()
}

/** An actor restored from the persisted snapshot (the input is typed-required but unused on restore). */
function actorOf(stored: StoredExceptionRequest<Exception>) {
  const { requestedBy, requestedAt } = stored.record
  return createActor(exceptionRequestMachine, {
    snapshot: stored.snapshot as RequestSnapshot,
    input: { requestedBy, requestedAt },
  })
}

/** The live snapshot behind a stored request, restored from its persisted form. */
function restore(stored: StoredExceptionRequest<Exception>): RequestSnapshot {
  return actorOf(stored).getSnapshot()
}

const statusOf = (snapshot: RequestSnapshot) => snapshot.value as ExceptionRequestStatus

/** The request as events carry it: the record plus status and decision fields from the snapshot. */
export function requestData(
  stored: StoredExceptionRequest<Exception>,
  snapshot: RequestSnapshot = restore(stored),
): ExceptionRequest {
  const { decidedBy, decidedAt, decisionComment, exceptionId, updatedAt } = snapshot.context
  return {
    ...stored.record,
    status: statusOf(snapshot),
    ...(decidedBy !== undefined ? { decidedBy } : {}),
    ...(decidedAt !== undefined ? { decidedAt } : {}),
    ...(decisionComment !== undefined ? { decisionComment } : {}),
    ...(exceptionId !== undefined ? { exceptionId } : {}),
    updatedAt,
  }
}

/**
 * What the caller may do now, asked of the actor itself: the approval is probed with a free
 * exception id, since the id is only known when the reviewer sends it.
 */
function flagsFor(snapshot: RequestSnapshot, facts: CallerFacts) {
  return {
    canApprove: snapshot.can({ type: 'APPROVE', ...facts, exceptionId: '', exceptionIdFree: true }),
    canDeny: snapshot.can({ type: 'DENY', ...facts }),
    canWithdraw: snapshot.can({ type: 'WITHDRAW', ...facts }),
  }
}

/** The API view of a stored request for the caller described by `facts`. */
export function present(stored: StoredExceptionRequest<Exception>, facts: CallerFacts): ExceptionRequestView {
  const snapshot = restore(stored)
  return { ...requestData(stored, snapshot), ...flagsFor(snapshot, facts) }
}

const VERBS = { APPROVE: 'approved', DENY: 'denied', WITHDRAW: 'withdrawn' } as const

/**
 * Why the actor refuses `event`, probed with `can()`: first with facts that satisfy every
 * guard (only the state can refuse then), then with the caller's permissions and a free id.
 */
function refusal(stored: StoredExceptionRequest<Exception>, snapshot: RequestSnapshot, event: ExceptionRequestEvent) {
  const permissive = {
    ...event,
    actor: snapshot.context.requestedBy,
    permissions: [DECIDE_PERMISSION],
    exceptionIdFree: true,
  }
  if (!snapshot.can(permissive)) {
    return conflict(
      'invalid_state',
      `exception request "${stored.record.id}" is ${statusOf(snapshot)} and cannot be ${VERBS[event.type]}`,
    )
  }
  if (!snapshot.can({ ...event, exceptionIdFree: true } as ExceptionRequestEvent)) return forbidden(DECIDE_PERMISSION)
  const id = event.type === 'APPROVE' ? event.exceptionId : ''
  return conflict('exception_exists', `exception "${id}" already exists on firewall "${stored.record.firewallId}"`)
}

/**
 * Restores the request's actor, sends `event` and returns the request with its next persisted
 * snapshot. Throws the refusal (409 state or id, 403 permission) when the actor does not move.
 */
export function transition(
  stored: StoredExceptionRequest<Exception>,
  event: ExceptionRequestEvent,
): { stored: StoredExceptionRequest<Exception>; status: ExceptionRequestStatus } {
  const before = restore(stored)
  if (!before.can(event)) throw refusal(stored, before, event)
  const actor = actorOf(stored)
  actor.start()
  actor.send(event)
  const next = { record: stored.record, snapshot: actor.getPersistedSnapshot() }
  actor.stop()
  return { stored: next, status: statusOf(restore(next)) }
}
