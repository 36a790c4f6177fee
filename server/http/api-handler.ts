import { defineEventHandler, isError, type EventHandler } from 'h3'
import type { ApiPorts } from './ports'
import type { Operation } from './operation'
import { createApiRouter } from './router'
import { problemOf } from './problem'
import { sendProblem } from './respond'

/**
 * The handler of every `/v1/...` request: the operation router; unknown paths and methods get a
 * problem, not HTML. Built by the `/v1/**` route file and by the direct dispatch (api-direct.ts).
 */
export function createApiHandler(operations: Operation[], getServices: () => Promise<ApiPorts>): EventHandler {
  const router = createApiRouter(operations, getServices)
  return defineEventHandler(async (event) => {
    try {
      return await router.handler(event)
    } catch (error) {
      const status = isError(error) && error.statusCode === 405 ? 405 : 404
      const problem =
        status === 405
          ? problemOf(405, 'method_not_allowed', `${event.method} is not allowed on ${event.path.split('?')[0]}`)
          : problemOf(404, 'route_not_found', `no API operation at ${event.path.split('?')[0]}`)
      return sendProblem(event, problem)
    }
  })
}
