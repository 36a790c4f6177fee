import { defineEventHandler } from 'h3'
import { useServices } from '../../app/runtime'
import { createRegistryHandler } from '../../registry/handler'

/** The registry proxy, `/registry/{ns}/{fw}/...`: all logic lives in server/registry/handler.ts. */
const handler = createRegistryHandler(useServices)

export default defineEventHandler((event) => handler(event))
