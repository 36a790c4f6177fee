import type { TxOutcome, TxWrites } from './ports'

/**
 * One repository's share of a transaction another repository runs: its keys, what it assumes they
 * hold (see `TxOptions.assume`), and a body over the values read. Lets two writes that must land
 * together (a delivery's record and the cursor moving past its batch) go to storage as one
 * transaction, one round trip, without either repository knowing the other's keys.
 */
export interface TxPart<R> {
  keys: string[]
  /** Values of every one of `keys` the caller knows; absent: they are read. */
  assume?: Map<string, unknown>
  body: (values: Map<string, unknown>) => TxOutcome<R>
}

/**
 * The writes of `a` and `b` as one: keys set by both take `b`'s value (the parts of one
 * transaction write different keys, so this does not happen in practice).
 */
export function mergeWrites(a: TxWrites, b: TxWrites): TxWrites {
  const logs = { ...a.logs, ...b.logs }
  const events = [...(a.events ?? []), ...(b.events ?? [])]
  const deleted = [...(a.delete ?? []), ...(b.delete ?? [])]
  const stamps = { ...a.stamps, ...b.stamps }
  return {
    set: { ...a.set, ...b.set },
    ...(Object.keys(stamps).length ? { stamps } : {}),
    ...(deleted.length ? { delete: deleted } : {}),
    ...(Object.keys(logs).length ? { logs } : {}),
    ...(events.length ? { events } : {}),
  }
}
