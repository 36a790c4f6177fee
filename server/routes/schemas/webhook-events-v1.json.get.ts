import { defineEventHandler, setResponseHeader } from 'h3'
import { useServices } from '../../app/runtime'
import { eventLinkOrigin } from '../../app/config'
import { buildWebhookEventsSchema } from '../../events/json-schema'

let document: string | null = null

/** `GET /schemas/webhook-events-v1.json`: no auth; built once from the event data schemas. */
export default defineEventHandler(async (event) => {
  document ??= JSON.stringify(buildWebhookEventsSchema(eventLinkOrigin((await useServices()).config)))
  setResponseHeader(event, 'content-type', 'application/schema+json')
  setResponseHeader(event, 'cache-control', 'public, max-age=300')
  return document
})
