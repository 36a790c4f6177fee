import { chromium, type BrowserServer } from 'playwright-core'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium'

let server: BrowserServer | null = null

/**
 * vitest globalSetup: one Chromium for every dashboard suite of the run, each connecting to it
 * (TEST_CHROMIUM_WS) and opening its own contexts, instead of a browser started per file (about
 * 1 s of CPU each). Started only when the run may include a dashboard suite: a run of every file,
 * or one whose file filters name the dashboard; other runs start none, and a suite without
 * TEST_CHROMIUM_WS starts its own (test/dashboard/harness.ts).
 */
export async function setup(): Promise<void> {
  if (process.env.TEST_CHROMIUM_WS || !mayRunDashboard(process.argv.slice(2))) return
  server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
  process.env.TEST_CHROMIUM_WS = server.wsEndpoint()
}

export async function teardown(): Promise<void> {
  await server?.close()
}

/** Whether a vitest command line runs dashboard suites: no file filter at all, or one naming them. */
function mayRunDashboard(args: string[]): boolean {
  const filters = args.filter((arg) => !arg.startsWith('-') && arg !== 'run' && !/\bvitest(\.mjs)?$/.test(arg))
  return filters.length === 0 || filters.some((filter) => filter.includes('dashboard'))
}
