/**
 * `npm run admin -- advisories sync|status [--ecosystem npm] [--file all.zip]`, on the service's
 * storage (same env). `sync` downloads the OSV feed now (under the same lease as the service);
 * with `--file` it imports a downloaded all.zip instead (air-gapped installs). The running
 * service loads the stored snapshot at its next pass (within 15 s or ADVISORY_REFRESH).
 */
import { createReadStream } from 'node:fs'
import { hostname } from 'node:os'
import { backendOptionsFromEnv, openBackend } from '../storage'
import { createServices, type Services } from '../server/app/services'
import { ecosystemsInUse } from '../server/advisories/ecosystems-in-use'
import { AdvisoryFeed, type FeedSyncReport } from '../server/advisories/feed-worker'
import { ECOSYSTEMS, Ecosystem } from '../server/firewall/schema'
import type { Command, Output } from './admin-output'

const USAGE = 'advisories sync|status [--ecosystem npm|pypi|maven|nuget] [--file all.zip] [--json]'

function report(r: FeedSyncReport): string {
  if (r.outcome === 'failed') return `${r.ecosystem}: failed: ${r.error}`
  if (r.outcome === 'busy') return `${r.ecosystem}: another process is downloading it now; try again later`
  const skipped = r.invalid || r.withdrawn ? ` (${r.invalid ?? 0} invalid, ${r.withdrawn ?? 0} withdrawn skipped)` : ''
  const figures = `${r.records} records${skipped}`
  return `${r.ecosystem}: ${r.outcome === 'unchanged' ? 'unchanged' : 'loaded'}, ${figures}`
}

async function status(services: Services, ecosystems: readonly Ecosystem[], out: Output): Promise<number> {
  const settings = services.config.advisories.feed
  const states = await services.advisoryFeed.states(ecosystems)
  const feed = settings.url ? `on, every ${settings.refresh}` : 'off'
  const lines = [`feed: ${feed}; ADVISORY_DIR: ${process.env.ADVISORY_DIR ? 'set' : 'unset'}`]
  const rows = ecosystems.map((ecosystem) => {
    const state = states.get(ecosystem)
    if (!state) {
      lines.push(`${ecosystem}: no stored data`)
      return { ecosystem, stored: false }
    }
    const error = state.lastError ? `; last error ${state.lastError.at}: ${state.lastError.message}` : ''
    const source = state.snapshotId ? `${state.origin ?? 'feed'}, ${state.records} records` : 'nothing stored'
    const times = `last refresh ${state.lastRefresh ?? 'never'}; last change ${state.lastChange ?? 'never'}`
    lines.push(`${ecosystem}: ${source}; ${times}${error}`)
    return {
      ecosystem,
      stored: Boolean(state.snapshotId),
      origin: state.snapshotId ? (state.origin ?? 'feed') : null,
      records: state.records ?? 0,
      lastRefresh: state.lastRefresh ?? null,
      lastChange: state.lastChange ?? null,
      lastError: state.lastError ?? null,
    }
  })
  out.result(lines.join('\n'), {
    feed: settings.url ? { on: true, refresh: settings.refresh } : { on: false },
    advisoryDir: Boolean(process.env.ADVISORY_DIR),
    ecosystems: rows,
  })
  return 0
}

async function sync(
  services: Services,
  ecosystems: Ecosystem[] | null,
  file: string | undefined,
  out: Output,
): Promise<number> {
  const settings = services.config.advisories.feed
  if (!file && !settings.url) {
    out.error('ADVISORY_FEED_URL is off: import a downloaded all.zip with --file <path> --ecosystem <name>')
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
      out.error('--file imports one ecosystem: name it with --ecosystem')
      return 2
    }
    const result = await feed.importArchive(ecosystems[0], createReadStream(file))
    out.result(report(result), [result])
    return result.outcome === 'loaded' ? 0 : 1
  }
  const targets = ecosystems ?? [...(await ecosystemsInUse(services.namespaces, services.firewalls))]
  if (targets.length === 0) {
    out.result('no firewall uses any ecosystem yet; name one with --ecosystem', [])
    return 0
  }
  const results = await feed.sync(targets)
  out.result(results.map(report).join('\n'), results)
  return results.every((r) => r.outcome === 'loaded' || r.outcome === 'unchanged') ? 0 : 1
}

/** `advisories status|sync`: the exit code of the command. */
export const ADVISORIES_COMMAND: Command = {
  usage: USAGE,
  summary:
    'Shows (status) or downloads now (sync) the vulnerability and malware data; sync --file imports a downloaded all.zip (air-gapped installs).',
  options: [
    ['status', 'per ecosystem: source, records, last refresh, last change, last error'],
    ['sync', "downloads the OSV feed of every ecosystem in use (or --ecosystem) under the service's lease"],
    ['--ecosystem <name>', 'npm, pypi, maven or nuget (default: all for status, those in use for sync)'],
    ['--file <all.zip>', 'with sync: import this archive instead of downloading (needs --ecosystem)'],
  ],
  async run(values, positionals, out) {
    const sub = positionals[1]
    const parsed = typeof values.ecosystem === 'string' ? Ecosystem.safeParse(values.ecosystem) : null
    if ((sub !== 'sync' && sub !== 'status') || (parsed && !parsed.success)) {
      out.error(`usage: npm run admin -- ${USAGE}`)
      return 2
    }
    const ecosystems = parsed?.success ? [parsed.data] : null
    const services = createServices(await openBackend(backendOptionsFromEnv(process.env)))
    try {
      if (sub === 'status') return await status(services, ecosystems ?? ECOSYSTEMS, out)
      return await sync(services, ecosystems, typeof values.file === 'string' ? values.file : undefined, out)
    } catch (error) {
      out.error(error instanceof Error ? error.message : String(error))
      return 1
    } finally {
      await services.storage.close()
    }
  },
}
