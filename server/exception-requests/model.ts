import { z } from 'zod'
import { Exception } from '../firewall/schema'

/** Status values of an exception request. */
const EXCEPTION_REQUEST_STATUSES = ['pending', 'approved', 'denied', 'withdrawn'] as const
const ExceptionRequestStatus = z.enum(EXCEPTION_REQUEST_STATUSES)

const Comment = z.string().max(4000)

/**
 * The request as events carry it (the OpenAPI document without the per-caller flags); decision fields are
 * omitted until set.
 */
export const ExceptionRequest = z.object({
  id: z.string(),
  firewallId: z.string(),
  status: ExceptionRequestStatus,
  proposedException: Exception,
  justification: z.string(),
  requestedBy: z.string(),
  requestedAt: z.string(),
  decidedBy: z.string().optional(),
  decidedAt: z.string().optional(),
  decisionComment: z.string().optional(),
  exceptionId: z.string().optional(),
  updatedAt: z.string(),
})
export type ExceptionRequest = z.infer<typeof ExceptionRequest>

/** The request as the API returns it: plus what the caller may do with it now. */
export const ExceptionRequestView = ExceptionRequest.extend({
  canApprove: z.boolean(),
  canDeny: z.boolean(),
  canWithdraw: z.boolean(),
})
export type ExceptionRequestView = z.infer<typeof ExceptionRequestView>

/**
 * `POST .../exception-requests`. Unknown fields (a `requestedBy`, say) are dropped:
 * the requester is always the caller.
 */
export const CreateExceptionRequestBody = z.object({
  proposedException: Exception,
  justification: z.string().min(1, 'a justification is required: say why the exception is needed').max(4000),
})
export type CreateExceptionRequestBody = z.infer<typeof CreateExceptionRequestBody>

/** `POST .../approve`: the exception to add (the proposal when absent) and the reviewer's comment. */
export const ApproveBody = z.object({ exception: Exception.optional(), comment: Comment.optional() })
export type ApproveBody = z.infer<typeof ApproveBody>

/** `POST .../deny`: the reviewer's comment, shown to the requester. */
export const DenyBody = z.object({ comment: Comment.optional() })

/** The answer of an approval. */
export const ApproveResult = z.object({
  request: ExceptionRequestView,
  exception: Exception,
  alsoApproved: z.array(z.string()),
})
export type ApproveResult = z.infer<typeof ApproveResult>

/** `?status=pending,denied&limit=&cursor=` of the list. */
export const ListQuery = z.object({
  status: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(ExceptionRequestStatus))
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
})
export type ListQuery = z.infer<typeof ListQuery>
