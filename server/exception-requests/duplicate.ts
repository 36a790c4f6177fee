import type { RequestIndex } from '../../storage/repositories/exception-requests'
import { DomainError } from '../common/errors'
import type { Exception } from '../firewall/schema'

/**
 * One developer, one pending request per proposal. A proposal is "the same" when it names the same
 * rule and the same selector (packageName, version): what makes requests "identical" for an
 * approval (CONTRACT section 6). Another developer's identical request is not a duplicate: it is
 * theirs to follow, and an approval approves both.
 */

/** The id of the requester's pending request for the same proposal, if one exists. */
export function pendingDuplicate(
  index: RequestIndex,
  requestedBy: string,
  proposal: Pick<Exception, 'rule' | 'selector'>,
): string | undefined {
  return Object.entries(index)
    .filter(
      ([, entry]) =>
        entry.status === 'pending' &&
        entry.requestedBy === requestedBy &&
        entry.rule === proposal.rule &&
        entry.packageName === proposal.selector.packageName &&
        entry.version === proposal.selector.version,
    )
    .map(([id]) => id)
    .sort()[0]
}

/** 409 naming the pending request (its id, and its API path as `pendingRequestUrl`). */
export function duplicateRequest(ns: string, firewallId: string, pendingId: string): DomainError {
  return new DomainError(
    'conflict',
    'duplicate_exception_request',
    `you already have a pending exception request for this proposal: "${pendingId}"`,
    {
      extra: {
        pendingRequestId: pendingId,
        pendingRequestUrl: `/v1/${ns}/config/${firewallId}/exception-requests/${pendingId}`,
      },
    },
  )
}
