import '#nitro-internal-pollyfills'
import { Server as HttpServer } from 'node:http'
import { Server as HttpsServer } from 'node:https'
import { toNodeListener } from 'h3'
import { useNitroApp } from 'nitropack/runtime'
import { setupGracefulShutdown } from 'nitropack/runtime/internal/shutdown'
import { trapUnhandledNodeErrors } from 'nitropack/runtime/internal/utils'
import { expectListening, markListening } from './listening'

/**
 * The production entry (Nitro's node-server preset, with `listen` made strict): a listen error
 * such as EADDRINUSE ends the process at once with exit code 1, and the app learns that it
 * owns the port (`whenListening`) only once it does, before any lease is taken. Nitro's own
 * entry logs the error as an uncaught exception and keeps running. Selected in nitro.config.ts.
 */
// Runs before any plugin's start-up continues (they await storage first), so lease-taking work
// sees that the outcome of listen will be reported.
expectListening()
const cert = process.env.NITRO_SSL_CERT
const key = process.env.NITRO_SSL_KEY
const nitroApp = useNitroApp()
const listener = toNodeListener(nitroApp.h3App)
const server = cert && key ? new HttpsServer({ key, cert }, listener) : new HttpServer(listener)
const port = Number(process.env.NITRO_PORT || process.env.PORT || 3000)
const host = process.env.NITRO_HOST || process.env.HOST
const socketPath = process.env.NITRO_UNIX_SOCKET

const listenFailed = (error: NodeJS.ErrnoException) => {
  console.error(`cannot listen on ${socketPath ?? `${host ?? '*'}:${port}`}: ${error.code ?? error.message}; exiting`)
  process.exit(1)
}
server.once('error', listenFailed)
server.listen(socketPath ? { path: socketPath } : { port, host }, () => {
  server.off('error', listenFailed)
  const address = server.address()
  if (typeof address === 'string') console.log(`Listening on unix socket ${address}`)
  else if (address) {
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
    console.log(`Listening on ${cert && key ? 'https' : 'http'}://${shown}:${address.port}`)
  }
  markListening()
})
trapUnhandledNodeErrors()
setupGracefulShutdown(server, nitroApp)
