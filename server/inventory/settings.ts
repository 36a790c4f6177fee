import { parseDuration } from '../common/duration'

/** `INVENTORY_RETENTION`: how long a served version stays after it was last served (default 400d). */
export const DEFAULT_INVENTORY_RETENTION = '400d'

export interface InventorySettings {
  retentionMs: number
  /** How long served versions wait in memory before they are written (coalescing). */
  flushMs: number
}

/** Reads the inventory settings; throws naming the variable on an invalid value (the start stops). */
export function inventorySettings(env: NodeJS.ProcessEnv): InventorySettings {
  const raw = env.INVENTORY_RETENTION || DEFAULT_INVENTORY_RETENTION
  let retentionMs: number
  try {
    retentionMs = parseDuration(raw)
  } catch (error) {
    throw new Error(`INVENTORY_RETENTION: ${(error as Error).message}`, { cause: error })
  }
  if (retentionMs <= 0) throw new Error('INVENTORY_RETENTION: must be longer than 0')
  return { retentionMs, flushMs: 1_000 }
}
