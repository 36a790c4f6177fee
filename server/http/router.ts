import { createRouter, defineEventHandler, getRouterParams, type H3Event, type Router } from 'h3'
import { ZodError, type z } from 'zod'
import { CLIENT_ID_PATTERN } from '../common/ids'
import { DomainError } from '../common/errors'
import type { ApiPorts } from './ports'
import { credentialFromHeader } from '../auth/authenticate'
import type { Principal, RequestMeta } from '../auth/principal'
import type { CallAudit } from '../auth/call-context'
import { auditWrites, recordAudit, type AuditRecord } from './audit'
import { emptyBody, hasBody, objectBody, readJsonBody } from './body'
import type { Operation } from './operation'
import { HttpProblem, fieldErrors, toProblem } from './problem'
import { sendJson, sendProblem, sendSerialized } from './respond'
import { logger } from '../app/logger'
import { authenticateCaller, enforceTokenRateLimit, openRequest } from './edge'
import { auditRefusal } from './refusal-audit'

function parseOr400<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  return resultOr400(schema.safeParse(value), where)
}

function resultOr400<T>(result: { success: true; data: T } | { success: false; error: ZodError }, where: string): T {
  if (!result.success) {
    const errors = fieldErrors(result.error, where)
    throw new HttpProblem(400, 'validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors)
  }
  return result.data
}

/**
 * Path parameters, decoded. A parameter that does not decode, or that carries a separator or a dot
 * segment once decoded (`%2F`, `%5C`, `..`), is refused here: it would otherwise reach storage keys.
 */
function pathParams(event: H3Event): Record<string, string> {
  const raw = getRouterParams(event, { decode: false })
  const decoded: Record<string, string> = Object.create(null)
  for (const [name, value] of Object.entries(raw)) {
    let text: string
    try {
      text = decodeURIComponent(value)
    } catch {
      throw new HttpProblem(400, 'invalid_path_parameter', `path parameter ${name} is not valid percent-encoding`)
    }
    if (/[/\\]/.test(text) || text === '.' || text === '..') {
      throw new HttpProblem(
        400,
        'invalid_path_parameter',
        `path parameter ${name} must not contain a path separator or be a dot segment`,
      )
    }
    decoded[name] = text
  }
  return decoded
}

/**
 * Wraps one operation, in the order docs/security.md fixes: request id, path parameters,
 * authentication (with the per-address failure limit), the token's rate limit, the access the path
 * demands, then query and body validation, the handler, the problem mapping and the audit record.
 */
function wrap(operation: Operation, getServices: () => Promise<ApiPorts>) {
  // The services once resolved: every later call goes on without a turn of its own (#27).
  let resolved: ApiPorts | undefined
  return defineEventHandler(async (event) => {
    const services = (resolved ??= await getServices())
    const { requestId, meta } = openRequest(event, services.config.trustProxy, operation.path)
    let rawParams: Record<string, string> = Object.create(null)
    let ns = ''
    let principal: Principal | null = null
    let status = 500
    let failure: { message: string; permission?: string } | null = null
    let createdId: string | undefined
    /** The status a command's own transaction audited the call as (`CallAudit`), if one did. */
    let auditedAs: number | null = null
    const callAudit = (principal: Principal, ctxMeta: RequestMeta): CallAudit => ({
      success: (statusCode, created) => ({
        writes: auditWrites(services, {
          ...auditFields(operation, ns, principal, ctxMeta, rawParams, created),
          outcome: 'success',
          statusCode,
        }),
        stored: () => (auditedAs = statusCode),
      }),
    })
    try {
      rawParams = pathParams(event)
      ns = rawParams.ns ?? ''
      if (!CLIENT_ID_PATTERN.test(ns))
        throw new HttpProblem(400, 'invalid_path_parameter', 'the namespace in the path is not a valid id')
      principal = await authenticateCaller(
        services,
        credentialFromHeader(event.node.req.headers.authorization),
        ns,
        meta,
      )
      // No API limit configured: nothing to count, and no turn for it (#27).
      if (services.config.rateLimits.api) await enforceTokenRateLimit(event, services, 'api', principal)
      const params = parseOr400(operation.params, rawParams, '')
      const ctx = { services, ns, principal, meta, audit: callAudit(principal, meta) }
      // Awaited only when the check reads something (a member check answers at once).
      const checked = operation.access(ctx, params as Record<string, string>)
      if (checked) await checked
      // Parsed only for an operation that reads its query or URL (#27: not on every read).
      let parsed: URL | undefined
      const urlOf = () => (parsed ??= new URL(event.node.req.url ?? '/', 'http://localhost'))
      const query = operation.query ? parseOr400(operation.query, Object.fromEntries(urlOf().searchParams), '') : {}
      const rawBody = hasBody(event.node.req)
        ? await readJsonBody(event.node.req, services.config.bodyLimit)
        : undefined
      let body: unknown
      // Only a JSON object reaches the schema: `null` or no body at all must not validate as "no fields".
      if (operation.parseBody)
        body = resultOr400(await operation.parseBody(objectBody(rawBody, operation.bodyOptional === true)), '')
      else if (operation.body)
        body = parseOr400(operation.body, objectBody(rawBody, operation.bodyOptional === true), '')
      else emptyBody(rawBody)
      const replied = operation.handler({
        ctx,
        params,
        query,
        body,
        headers: event.node.req.headers,
        get url() {
          return urlOf()
        },
      })
      // Awaited only when the handler had to read (a kept answer comes at once).
      const reply = replied instanceof Promise ? await replied : replied
      status = reply.status ?? operation.successStatus ?? 200
      if (status === 201) createdId = idOf(reply.body)
      if (reply.json !== undefined) return sendSerialized(event, status, reply.json, reply.headers, operation.mediaType)
      return await sendJson(event, status, reply.body, reply.headers)
    } catch (error) {
      const { problem, headers, unexpected } = toProblem(error)
      status = problem.status
      problem.instance = `urn:request:${requestId}`
      failure = { message: problem.detail, permission: problem.permission }
      if (unexpected)
        logger.error('request failed', {
          requestId,
          operation: operation.id,
          error: (error as Error)?.stack ?? String(error),
        })
      if (error instanceof DomainError && error.kind === 'unauthenticated')
        event.node.res.setHeader('www-authenticate', 'Bearer')
      return sendProblem(event, problem, headers)
    } finally {
      const mutating = operation.method !== 'GET'
      // Awaited: when the client has its answer, the audit entry and event exist.
      if (status === 429 && CLIENT_ID_PATTERN.test(ns)) {
        // Refusals past a limit are audited in aggregate, so a flood cannot become audit writes.
        await auditRefusal(services, { ns, scope: principal ? 'api' : 'auth', principal, meta, statusCode: 429 }).catch(
          (error) => logger.error('audit write failed', { requestId, error: String(error) }),
        )
      } else if (auditedAs !== null && auditedAs === status && !failure) {
        // Written with the change (CallAudit), before the answer.
      } else if ((mutating || failure || operation.audit.reads) && CLIENT_ID_PATTERN.test(ns)) {
        await auditCall(services, operation, ns, principal, meta, status, failure, rawParams, createdId).catch(
          (error) => logger.error('audit write failed', { requestId, error: String(error) }),
        )
      }
    }
  })
}

/** The id of a created resource (every create answers the resource, or `{ request }`-like wrappers do not). */
function idOf(body: unknown): string | undefined {
  const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined
  return typeof id === 'string' ? id : undefined
}

async function auditCall(
  services: ApiPorts,
  operation: Operation,
  ns: string,
  principal: Principal | null,
  meta: RequestMeta,
  status: number,
  failure: { message: string; permission?: string } | null,
  params: Record<string, string>,
  createdId?: string,
): Promise<void> {
  // Calls that never reached a namespace (unknown or another one) have no audit log to go to.
  if (!principal && !(await services.namespaces.get(ns))) return
  await recordAudit(services, {
    ...auditFields(operation, ns, principal, meta, params, createdId),
    outcome: failure ? 'failure' : 'success',
    statusCode: status,
    errorMessage: failure?.message,
    eventData: failure?.permission ? { permission: failure.permission } : undefined,
  })
}

/** What a call's audit entry says whatever its outcome: the operation, the caller, the resource. */
function auditFields(
  operation: Operation,
  ns: string,
  principal: Principal | null,
  meta: RequestMeta,
  params: Record<string, string>,
  createdId: string | undefined,
): Omit<AuditRecord, 'outcome' | 'statusCode'> {
  let resourceId: string | undefined = createdId
  try {
    resourceId ??= operation.audit.resourceId?.(params)
  } catch {
    resourceId = undefined
  }
  return { ns, action: operation.audit.action, principal, meta, resourceType: operation.audit.resourceType, resourceId }
}

const toH3Path = (path: string) => path.replace(/\{(\w+)\}/g, ':$1')

/** The API router built from the operation table. */
export function createApiRouter(operations: Operation[], getServices: () => Promise<ApiPorts>): Router {
  const router = createRouter({ preemptive: true })
  for (const operation of operations) {
    router.add(toH3Path(operation.path), wrap(operation, getServices), operation.method.toLowerCase() as 'get')
  }
  return router
}

export { ZodError }
