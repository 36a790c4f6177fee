import { defineEventHandler, setResponseHeader } from 'h3'
import { eventLinkOrigin, type AppConfig } from '../app/config'
import { buildWebhookEventsSchema } from './json-schema'

/**
 * `GET /schemas/webhook-events-v1.json`: no auth; built once, on first request, from the event
 * data schemas with links to the configured origin.
 * @example export default createWebhookEventsSchemaHandler(useServices)
 */
export function createWebhookEventsSchemaHandler(
  services: () => Promise<{ config: Pick<AppConfig, 'dashboardUrl' | 'publicBaseUrl' | 'port'> }>,
) {
  let document: string | null = null
  return defineEventHandler(async (event) => {
    document ??= JSON.stringify(buildWebhookEventsSchema(eventLinkOrigin((await services()).config)))
    setResponseHeader(event, 'content-type', 'application/schema+json')
    setResponseHeader(event, 'cache-control', 'public, max-age=300')
    return document
  })
}
