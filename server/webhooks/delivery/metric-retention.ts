import type { WebhookRepository } from '../../../storage/repositories/webhooks'
import type { WebhookRecordRepository } from '../../../storage/repositories/webhook-records'
import { parseWebhookRef } from '../../../storage/repositories/webhook-keys'
import type { BucketSize } from './record'

const DAY = 86_400_000

/**
 * How long metric buckets of each size are kept (#14): minute buckets for a day, hour buckets for
 * 30 days, day buckets as long as the logs (`LOG_RETENTION`). The metrics API's default ranges
 * (60 minutes, 24 hours, 30 days) stay inside these windows.
 * @example metricWindows(30 * DAY)['1m'] // 86_400_000
 */
function metricWindows(retentionMs: number): Record<BucketSize, number> {
  return { '1m': DAY, '1h': 30 * DAY, '1d': retentionMs }
}

/** Bucket starts before which each size is removed at `now`: a bucket goes once it ended before its window. */
export function metricCutoffs(now: number, retentionMs: number): Record<BucketSize, number> {
  const windows = metricWindows(retentionMs)
  return { '1m': now - windows['1m'], '1h': now - windows['1h'], '1d': now - windows['1d'] }
}

/**
 * One pruning pass over every webhook's metric buckets; returns the number removed. Run by the
 * retention worker under its lease, so one process does it per pass.
 */
export async function pruneMetricBuckets(
  webhooks: WebhookRepository,
  records: WebhookRecordRepository,
  now: number,
  retentionMs: number,
): Promise<number> {
  const cutoffs = metricCutoffs(now, retentionMs)
  let removed = 0
  for (const ref of await webhooks.allRefs()) {
    const { ns, id } = parseWebhookRef(ref)
    removed += await records.pruneMetrics(ns, id, cutoffs)
  }
  return removed
}
