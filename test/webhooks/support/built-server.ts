import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { startServer } from '../../support/server'

/** A personal token in the service's format, for BOOTSTRAP_TOKEN. */
export const bootstrapToken = () => `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`

export interface BuiltServer {
  url: string
  pid: number
  process: ChildProcess
  output: () => string
  exited: Promise<number | null>
  kill(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts the built server (test/support/server.ts) with `env` and the shape these suites use. */
export async function startBuiltServer(env: Record<string, string>): Promise<BuiltServer> {
  const server = await startServer({ LOG_LEVEL: 'info', ...env })
  const exited = new Promise<number | null>((resolveExit) => {
    if (server.process.exitCode !== null) resolveExit(server.process.exitCode)
    else server.process.once('exit', (code) => resolveExit(code))
  })
  return {
    url: server.url,
    pid: server.process.pid!,
    process: server.process,
    output: server.output,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill(signal)
      return exited
    },
  }
}

/** The shared wait (test/support/wait-for.ts), re-exported for the suites built on this harness. */
export { waitFor } from '../../support/wait-for'
