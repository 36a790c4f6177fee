import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { RunningServer } from './server'

const run = promisify(execFile)

/** The admin CLI: the run's bundle of scripts/admin.ts (test/support/global-bundles.ts), else the sources through tsx. */
const CLI = process.env.TEST_ADMIN_CLI ? [process.env.TEST_ADMIN_CLI] : ['--import', 'tsx', 'scripts/admin.ts']

/** Runs the admin CLI (`npm run admin -- ...`) on the server's storage; returns the last stdout line. */
export async function adminCli(server: RunningServer, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [...CLI, ...args], {
    // Exactly the server's storage settings (the test process itself may carry a REDIS_URL).
    env: { ...server.env, PORT: '' },
  })
  return stdout.trim().split('\n').at(-1)!
}

export const createUser = (server: RunningServer, user: string, ns = 'default') =>
  adminCli(server, 'create-user', '--namespace', ns, '--user', user)
