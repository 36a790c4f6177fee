import { createRouter, defineEventHandler, getRequestIP, getRouterParams, type H3Event, type Router } from 'h3'
import { ZodError, type z } from 'zod'
import { newId } from '../common/ids'
import { DomainError } from '../common/errors'
import type { Services } from '../app/services'
import { authenticate, credentialFromHeader } from '../auth/authenticate'
import type { Principal, RequestMeta } from '../auth/principal'
import { recordAudit } from './audit'
import { readJsonBody } from './body'
import type { Operation } from './operation'
import { HttpProblem, fieldErrors, toProblem } from './problem'
import { sendJson, sendProblem, sendSerialized } from './respond'
import { logger } from '../app/logger'
import { currentRequestId, setRequestRoute } from '../app/request-context'
import { enforceApiRateLimit } from './rate-limit'

function parseOr400<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value)
  if (!result.success) {
    const errors = fieldErrors(result.error, where)
    throw new HttpProblem(400, 'validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors)
  }
  return result.data
}

function requestMeta(event: H3Event, requestId: string): RequestMeta {
  const req = event.node.req
  return {
    requestId,
    remoteAddress: (getRequestIP(event, { xForwardedFor: process.env.TRUST_PROXY === 'true' }) ?? req.socket.remoteAddress)?.replace(/^::ffff:(?=\d+\.)/, ''),
    userAgent: req.headers['user-agent']?.slice(0, 300),
    method: req.method,
    path: (req.url ?? '').split('?')[0],
  }
}

/** Only bodies an action endpoint may carry: nothing or `{}`. */
function expectEmpty(body: unknown): void {
  if (body === undefined) return
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) return
  throw new HttpProblem(400, 'unexpected_body', 'this operation takes an empty body or {}')
}

/**
 * Wraps one operation: request id, authentication, validation of params, query and body,
 * the handler, the problem mapping and the audit record. Handlers stay thin.
 */
function wrap(operation: Operation, getServices: () => Promise<Services>) {
  return defineEventHandler(async (event) => {
    // The observability plugin's id when served by Nitro, so the access line and this request's lines agree.
    const requestId = currentRequestId() ?? newId('req')
    setRequestRoute(operation.path)
    event.node.res.setHeader('x-request-id', requestId)
    const meta = requestMeta(event, requestId)
    const services = await getServices()
    const rawParams = getRouterParams(event, { decode: true })
    const ns = rawParams.ns ?? ''
    let principal: Principal | null = null
    let status = 500
    let failure: { message: string; permission?: string } | null = null
    try {
      principal = await authenticate(services, credentialFromHeader(event.node.req.headers.authorization), ns)
      await enforceApiRateLimit(event, services, principal)
      const params = parseOr400(operation.params, rawParams, '')
      const url = new URL(event.node.req.url ?? '/', 'http://localhost')
      const query = operation.query ? parseOr400(operation.query, Object.fromEntries(url.searchParams), '') : {}
      const rawBody = await readJsonBody(event.node.req, services.config.bodyLimit)
      let body: unknown
      if (operation.body) body = parseOr400(operation.body, rawBody ?? null, '')
      else expectEmpty(rawBody)
      const reply = await operation.handler({ ctx: { services, ns, principal, meta }, params, query, body, headers: event.node.req.headers, url })
      status = reply.status ?? operation.successStatus ?? 200
      if (reply.json !== undefined) return sendSerialized(event, status, reply.json, reply.headers)
      return sendJson(event, status, reply.body, reply.headers)
    } catch (error) {
      const { problem, headers, unexpected } = toProblem(error)
      status = problem.status
      problem.instance = `urn:request:${requestId}`
      failure = { message: problem.detail, permission: problem.permission }
      if (unexpected) logger.error('request failed', { requestId, operation: operation.id, error: (error as Error)?.stack ?? String(error) })
      if (error instanceof DomainError && error.kind === 'unauthenticated') event.node.res.setHeader('www-authenticate', 'Bearer')
      return sendProblem(event, problem, headers)
    } finally {
      const mutating = operation.method !== 'GET'
      // A refused (429) call is counted in metrics, not audited: a flood must not turn into audit writes.
      if ((mutating || failure || operation.audit.reads) && status !== 429) {
        // Awaited: when the client has its answer, the audit entry and event exist.
        await auditCall(services, operation, ns, principal, meta, status, failure, rawParams).catch((error) =>
          logger.error('audit write failed', { requestId, error: String(error) }),
        )
      }
    }
  })
}

async function auditCall(
  services: Services,
  operation: Operation,
  ns: string,
  principal: Principal | null,
  meta: RequestMeta,
  status: number,
  failure: { message: string; permission?: string } | null,
  params: Record<string, string>,
): Promise<void> {
  // Calls that never reached a namespace (unknown or another one) have no audit log to go to.
  if (!principal && !(await services.namespaces.get(ns))) return
  let resourceId: string | undefined
  try {
    resourceId = operation.audit.resourceId?.(params)
  } catch {
    resourceId = undefined
  }
  await recordAudit(services, {
    ns,
    action: operation.audit.action,
    outcome: failure ? 'failure' : 'success',
    statusCode: status,
    principal,
    meta,
    resourceType: operation.audit.resourceType,
    resourceId,
    errorMessage: failure?.message,
    eventData: failure?.permission ? { permission: failure.permission } : undefined,
  })
}

const toH3Path = (path: string) => path.replace(/\{(\w+)\}/g, ':$1')

/** The API router built from the operation table. */
export function createApiRouter(operations: Operation[], getServices: () => Promise<Services>): Router {
  const router = createRouter({ preemptive: true })
  for (const operation of operations) {
    router.add(toH3Path(operation.path), wrap(operation, getServices), operation.method.toLowerCase() as 'get')
  }
  return router
}

export { ZodError }
