/**
 * `npm run admin -- advisories sync|status [--ecosystem npm] [--file all.zip]`, on the service's
 * storage (same env). `sync` downloads the OSV feed now (under the same lease as the service);
 * with `--file` it imports a downloaded all.zip instead (air-gapped installs). The running
 * service loads the stored snapshot at its next pass (within 15 s or ADVISORY_REFRESH).
 */
import { createReadStream } from 'node:fs'
import { hostname } from 'node:os'
import { createBackend } from '../storage'
import { createServices, type Services } from '../server/app/services'
import { ecosystemsInUse } from '../server/advisories/ecosystems-in-use'
import { AdvisoryFeed, type FeedSyncReport } from '../server/advisories/feed-worker'
import { advisoryFeedSettings } from '../server/advisories/settings'
import { ECOSYSTEMS, Ecosystem } from '../server/firewall/schema'

export const ADVISORIES_USAGE =
  'npm run admin -- advisories sync|status [--ecosystem npm|pypi|maven|nuget] [--file all.zip]'

function report(r: FeedSyncReport): string {
  if (r.outcome === 'failed') return `${r.ecosystem}: failed: ${r.error}`
  if (r.outcome === 'busy') return `${r.ecosystem}: another process is downloading it now; try again later`
  const skipped = r.invalid || r.withdrawn ? ` (${r.invalid ?? 0} invalid, ${r.withdrawn ?? 0} withdrawn skipped)` : ''
  const figures = `${r.records} records${skipped}`
  return `${r.ecosystem}: ${r.outcome === 'unchanged' ? 'unchanged' : 'loaded'}, ${figures}`
}

async function status(services: Services, ecosystems: readonly Ecosystem[]): Promise<number> {
  const settings = advisoryFeedSettings()
  const states = await services.advisoryFeed.states(ecosystems)
  const feed = settings.url ? `on, every ${settings.refresh}` : 'off'
  process.stdout.write(`feed: ${feed}; ADVISORY_DIR: ${process.env.ADVISORY_DIR ? 'set' : 'unset'}\n`)
  for (const ecosystem of ecosystems) {
    const state = states.get(ecosystem)
    if (!state) {
      process.stdout.write(`${ecosystem}: no stored data\n`)
      continue
    }
    const error = state.lastError ? `; last error ${state.lastError.at}: ${state.lastError.message}` : ''
    const source = state.snapshotId ? `${state.origin ?? 'feed'}, ${state.records} records` : 'nothing stored'
    const times = `last refresh ${state.lastRefresh ?? 'never'}; last change ${state.lastChange ?? 'never'}`
    process.stdout.write(`${ecosystem}: ${source}; ${times}${error}\n`)
  }
  return 0
}

async function sync(services: Services, ecosystems: Ecosystem[] | null, file: string | undefined): Promise<number> {
  const settings = advisoryFeedSettings()
  if (!file && !settings.url) {
    process.stderr.write('ADVISORY_FEED_URL is off: import a downloaded all.zip with --file <path> --ecosystem <name>\n')
    return 2
  }
  const feed = new AdvisoryFeed({
    repository: services.advisoryFeed,
    lease: (ecosystem) => services.leases.advisoryFeed(ecosystem),
    settings,
    clock: services.clock,
    owner: `admin-cli:${hostname()}:${process.pid}`,
    ecosystemsInUse: () => ecosystemsInUse(services.namespaces, services.firewalls),
  })
  if (file) {
    if (!ecosystems || ecosystems.length !== 1) {
      process.stderr.write('--file imports one ecosystem: name it with --ecosystem\n')
      return 2
    }
    const result = await feed.importArchive(ecosystems[0], createReadStream(file))
    process.stdout.write(`${report(result)}\n`)
    return result.outcome === 'loaded' ? 0 : 1
  }
  const targets = ecosystems ?? [...(await ecosystemsInUse(services.namespaces, services.firewalls))]
  if (targets.length === 0) {
    process.stdout.write('no firewall uses any ecosystem yet; name one with --ecosystem\n')
    return 0
  }
  const results = await feed.sync(targets)
  for (const result of results) process.stdout.write(`${report(result)}\n`)
  return results.every((r) => r.outcome === 'loaded' || r.outcome === 'unchanged') ? 0 : 1
}

/** Runs `advisories <sub>`; the exit code of the command. */
export async function advisoriesCommand(
  sub: string | undefined,
  options: { ecosystem?: string; file?: string },
): Promise<number> {
  const parsed = options.ecosystem === undefined ? null : Ecosystem.safeParse(options.ecosystem)
  if ((sub !== 'sync' && sub !== 'status') || (parsed && !parsed.success)) {
    process.stderr.write(`usage: ${ADVISORIES_USAGE}\n`)
    return 2
  }
  const ecosystems = parsed?.success ? [parsed.data] : null
  const services = createServices(createBackend())
  try {
    if (sub === 'status') return await status(services, ecosystems ?? ECOSYSTEMS)
    return await sync(services, ecosystems, options.file)
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  } finally {
    await services.storage.close()
  }
}
