import type { FirewallCall } from './ports'
import { requireFirewallPermission } from '../auth/permissions'
import { firewallNotFound } from '../common/errors'
import {
  addEntry,
  blockWindow,
  coverage,
  emptyTally,
  type BlockTally,
  type Coverage,
  type TallyEnd,
} from './block-tally'

/** Entries read per storage round trip. */
const BATCH = 500
/**
 * Entries examined per firewall for one summary. The log is the only record of blocks, and it
 * holds allowed decisions too; past this bound the summary says from when it is complete.
 */
export const BLOCK_SCAN_LIMIT = 50_000

export interface BlockSummary {
  firewall: string
  tally: BlockTally
  coverage: Coverage
}

interface SummaryOptions {
  /** How long the log keeps entries (LOG_RETENTION), to tell a trimmed log from an idle one. */
  retentionMs: number
  days?: number
  scanLimit?: number
}

/**
 * Blocks per day over the last `days` UTC days of one firewall (needs `fw:read`), read from its
 * decision log newest first until the window's start, the log's start or `scanLimit` entries.
 * @example const { tally, coverage } = await blockSummary(ctx, 'web', { retentionMs: 30 * DAY })
 */
export async function blockSummary(ctx: FirewallCall, fwId: string, options: SummaryOptions): Promise<BlockSummary> {
  const firewall = await ctx.services.firewalls.get(ctx.ns, fwId)
  if (!firewall) throw firewallNotFound(fwId)
  requireFirewallPermission(ctx.principal, firewall, 'fw:read')
  const now = ctx.services.clock.now()
  const tally = emptyTally(blockWindow(now, options.days ?? 30))
  const limit = options.scanLimit ?? BLOCK_SCAN_LIMIT
  let before: string | null = null
  let read = 0
  let end: TallyEnd = { kind: 'log_start', retainedSince: now - options.retentionMs }
  scan: while (read < limit) {
    const batch = await ctx.services.firewallLog.range(ctx.ns, fwId, before, Math.min(BATCH, limit - read))
    for (const item of batch) {
      read++
      before = item.cursor
      if (!addEntry(tally, item.value)) {
        end = { kind: 'window' }
        break scan
      }
    }
    if (batch.length < BATCH) break
  }
  if (read >= limit && end.kind === 'log_start') end = { kind: 'scan_limit' }
  return { firewall: fwId, tally, coverage: coverage(tally, end) }
}
