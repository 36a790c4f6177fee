import { defineNitroPlugin } from 'nitropack/runtime'
import type { H3Event } from 'h3'
import { operations } from '../operations'
import { useServices } from '../app/runtime'
import { createApiHandler } from '../http/api-handler'
import { answerDirect, isDirectApiPath } from '../http/api-direct'

/**
 * API calls go straight to the API handler (server/http/api-direct.ts says what Nitro's stack
 * would have added). Named to run first: the plugins after it (00.services: the in-flight count;
 * 10.observability: the request context, access line and metrics) wrap this dispatch in turn.
 */
export default defineNitroPlugin((nitroApp) => {
  const api = createApiHandler(operations, useServices)
  const inner = nitroApp.h3App.handler
  nitroApp.h3App.handler = ((event: H3Event) =>
    isDirectApiPath(event.node.req.url) ? answerDirect(event, api) : inner(event)) as typeof inner
})
