import { defineEventHandler, isError } from 'h3'
import { operations } from '../../operations'
import { useServices } from '../../app/runtime'
import { createApiRouter } from '../../http/router'
import { problemOf } from '../../http/problem'
import { sendProblem } from '../../http/respond'

const router = createApiRouter(operations, useServices)

/** Every `/v1/...` request goes through the operation router; unknown paths get a problem, not HTML. */
export default defineEventHandler(async (event) => {
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
