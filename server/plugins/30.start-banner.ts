import { defineNitroPlugin } from 'nitropack/runtime'
import { useServices } from '../app/runtime'
import { whenListening } from '../app/listening'
import { startBanner } from '../app/start-banner'

/** Prints where to go next once storage is ready and the port is ours (never for a process that fails to start). */
export default defineNitroPlugin(() => {
  void Promise.all([useServices(), whenListening()]).then(([services]) => {
    process.stdout.write(`${startBanner(services.config, services.config.port)}\n`)
  })
})
