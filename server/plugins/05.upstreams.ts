import { defineNitroPlugin } from 'nitropack/runtime'
import { closeUpstreamTransport } from '../registry/upstream/transport'

/** Closes the pooled upstream connections on shutdown (the agent itself is built on first use). */
export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hookOnce('close', () => closeUpstreamTransport())
})
