import { operations } from '../../operations'
import { useServices } from '../../app/runtime'
import { createApiHandler } from '../../http/api-handler'

/**
 * Every `/v1/...` request the direct dispatch leaves to Nitro (server/http/api-direct.ts: `/v1` itself,
 * percent-encoded paths) goes through the operation router; unknown paths get a problem, not HTML.
 */
export default createApiHandler(operations, useServices)
