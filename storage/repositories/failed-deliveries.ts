import type { StoredDeliveryRecord } from '../model/delivery'

/**
 * Failed deliveries outlive the 128 records a webhook keeps, so `recover` still finds them after
 * a busy day: the ledger lists them (id and first-attempt time, oldest first) and each failed
 * record is kept as it was when it failed (its event source, no payload) under a key of its own.
 */

/** Failed deliveries kept per webhook for `recover`, oldest dropped first. */
export const FAILED_KEPT = 1_000

export interface FailedLedger {
  items: { id: string; createdAt: string }[]
}

/**
 * The ledger with `record` entered (once), and the ids that no longer fit (their kept records go).
 * @example enterFailed(null, record) // { ledger: { items: [{ id: record.id, createdAt }] }, dropped: [] }
 */
export function enterFailed(
  ledger: FailedLedger | null,
  record: StoredDeliveryRecord,
  kept = FAILED_KEPT,
): { ledger: FailedLedger; dropped: string[] } {
  const items = ledger?.items ?? []
  if (items.some((item) => item.id === record.id)) return { ledger: { items }, dropped: [] }
  const next = [...items, { id: record.id, createdAt: record.createdAt }]
  const over = Math.max(0, next.length - kept)
  return { ledger: { items: next.slice(over) }, dropped: next.slice(0, over).map((item) => item.id) }
}
