import { defineEventHandler, isError, type EventHandler } from 'h3'
import type { ApiPorts } from './ports'
import type { Operation } from './operation'
import { createApiRouter } from './router'
import { unroutedProblem } from './problem'
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
      const status = isError(error) ? error.statusCode : undefined
      return sendProblem(event, unroutedProblem(event.method, event.path, status, 'no API operation'))
    }
  })
}
