import { z } from 'zod'
import { ClientId } from '../common/ids'
import { defineOperation } from '../http/operation'
import { DECIDE_PERMISSION } from '../../machines/exception-request.machine'
import { firewall } from '../http/access'
import {
  ApproveBody,
  ApproveResult,
  CreateExceptionRequestBody,
  DenyBody,
  ExceptionRequestView,
  ListQuery,
  approveExceptionRequest,
  createExceptionRequest,
  denyExceptionRequest,
  getExceptionRequest,
  listExceptionRequests,
  withdrawExceptionRequest,
} from '../exception-requests'
import { FwParams, nextLink } from './common'

const tag = 'Exception requests'
const BASE = '/v1/{ns}/config/{fw}/exception-requests'
const RequestParams = FwParams.extend({ id: ClientId })
const audit = (action: string) => ({
  action: `exception-request.${action}`,
  resourceType: 'exception-request',
  resourceId: (p: Record<string, string | undefined>) => p.id,
})

/** The exception-request operations: list, read, create, approve, deny, withdraw. */
export const exceptionRequestOperations = [
  defineOperation({
    id: 'createExceptionRequest',
    method: 'POST',
    path: BASE,
    summary: 'Request an exception (the requester is the caller)',
    tag,
    params: FwParams,
    access: firewall('fw:access'),
    body: CreateExceptionRequestBody,
    response: ExceptionRequestView,
    successStatus: 201,
    audit: audit('create'),
    handler: async ({ ctx, params, body }) => {
      const request = await createExceptionRequest(ctx, params.fw, body)
      return {
        status: 201,
        body: request,
        headers: { location: `/v1/${ctx.ns}/config/${params.fw}/exception-requests/${request.id}` },
      }
    },
  }),
  defineOperation({
    id: 'listExceptionRequests',
    method: 'GET',
    path: BASE,
    summary: "List a firewall's exception requests, oldest first",
    tag,
    params: FwParams,
    access: firewall('visible'),
    query: ListQuery,
    response: z.array(ExceptionRequestView),
    audit: audit('list'),
    handler: async ({ ctx, params, query, url }) => {
      const { items, next } = await listExceptionRequests(ctx, params.fw, query)
      return { body: items, headers: nextLink(url, next) }
    },
  }),
  defineOperation({
    id: 'getExceptionRequest',
    method: 'GET',
    path: `${BASE}/{id}`,
    summary: 'Get an exception request',
    tag,
    params: RequestParams,
    access: firewall('visible'),
    response: ExceptionRequestView,
    audit: audit('read'),
    handler: async ({ ctx, params }) => ({ body: await getExceptionRequest(ctx, params.fw, params.id) }),
  }),
  defineOperation({
    id: 'approveExceptionRequest',
    method: 'POST',
    path: `${BASE}/{id}/approve`,
    summary: 'Approve: add the exception and approve identical pending requests',
    tag,
    params: RequestParams,
    access: firewall(DECIDE_PERMISSION),
    body: ApproveBody,
    bodyOptional: true,
    response: ApproveResult,
    audit: audit('approve'),
    handler: async ({ ctx, params, body }) => ({
      body: await approveExceptionRequest(ctx, params.fw, params.id, body),
    }),
  }),
  defineOperation({
    id: 'denyExceptionRequest',
    method: 'POST',
    path: `${BASE}/{id}/deny`,
    summary: 'Deny a pending request',
    tag,
    params: RequestParams,
    access: firewall(DECIDE_PERMISSION),
    body: DenyBody,
    bodyOptional: true,
    response: ExceptionRequestView,
    audit: audit('deny'),
    handler: async ({ ctx, params, body }) => ({
      body: await denyExceptionRequest(ctx, params.fw, params.id, body.comment),
    }),
  }),
  defineOperation({
    id: 'withdrawExceptionRequest',
    method: 'POST',
    path: `${BASE}/{id}/withdraw`,
    summary: 'Withdraw a pending request (requester or reviewer)',
    tag,
    params: RequestParams,
    access: firewall('visible'),
    response: ExceptionRequestView,
    audit: audit('withdraw'),
    handler: async ({ ctx, params }) => ({ body: await withdrawExceptionRequest(ctx, params.fw, params.id) }),
  }),
]
