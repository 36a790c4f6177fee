import { defineNitroPlugin } from 'nitropack/runtime'
import { useServices } from '../app/runtime'

/** Closes the pooled upstream connections on shutdown (the agent itself is built on first use). */
export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hookOnce('close', async () => (await useServices()).upstreamTransport.close())
})
