/**
 * What a firewall's inventory keeps of one served package version. Times are ms since the epoch;
 * `servedTo` holds principal ids, newest first, at most `SERVED_TO_KEPT`.
 */
export interface InventoryVersion {
  firstServedAt: number
  lastServedAt: number
  count: number
  servedTo: string[]
}

/** Principals kept per served version (CONTRACT section 3: the newest 100). */
export const SERVED_TO_KEPT = 100

/**
 * One package of one ecosystem in a namespace, with every version each firewall served: the
 * document the exposure match reads by package name, one key per package (`keys.inventoryPackage`).
 * `firewalls` maps firewall id -> version -> what was served.
 */
export interface InventoryPackage {
  ecosystem: string
  /** The name as the client asked for it (the first time it was served). */
  packageName: string
  firewalls: Record<string, Record<string, InventoryVersion>>
}

/**
 * Served versions noted since the last write, to be merged into storage: counts add up, first
 * times take the minimum, last times the maximum, principals the newest.
 */
export interface InventoryAddition {
  firewall: string
  ecosystem: string
  packageName: string
  /** The package key (`normalizedName`): where two spellings of one package meet. */
  nameKey: string
  version: string
  firstServedAt: number
  lastServedAt: number
  count: number
  /** Principal ids, newest first. */
  servedTo: string[]
}

/**
 * A served version that advisory data named after it was served. Stored once per firewall,
 * version and advisory: its id is derived from them, and it is written only where absent.
 */
export interface ExposureRecord {
  id: string
  firewall: string
  ecosystem: string
  packageName: string
  version: string
  advisory: { id: string; aliases: string[]; kind: 'malware' | 'vulnerability'; severity?: string }
  firstServedAt: string
  lastServedAt: string
  servedTo: string[]
  detectedAt: string
  status: 'open' | 'acknowledged'
  acknowledgedAt?: string
  acknowledgedBy?: string
  comment?: string
}

/** What the exposure index keeps per exposure, to list and filter without reading them all. */
export interface ExposureIndexEntry {
  firewall: string
  status: 'open' | 'acknowledged'
  detectedAt: string
}
