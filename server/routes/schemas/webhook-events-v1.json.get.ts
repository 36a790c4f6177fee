import { useServices } from '../../app/runtime'
import { createWebhookEventsSchemaHandler } from '../../events/schema-route'

/** `GET /schemas/webhook-events-v1.json` (server/events/schema-route.ts). */
export default createWebhookEventsSchemaHandler(useServices)
