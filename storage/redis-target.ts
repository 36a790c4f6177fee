/** A Redis Cluster node given in REDIS_CLUSTER_NODES. */
export interface ClusterNodeAddress {
  host: string
  port: number
}

/** A storage setting that cannot be used: the service refuses to start and names the setting. */
export class StorageSettingError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`)
    this.name = 'StorageSettingError'
  }
}

const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/

/**
 * Parses `REDIS_CLUSTER_NODES=host:port,host:port,...` (IPv6 as `[addr]:port`): the nodes ioredis
 * starts from; it discovers the others. Throws StorageSettingError on anything else.
 * @example parseClusterNodes('10.0.0.1:7000,10.0.0.2:7000') // [{ host: '10.0.0.1', port: 7000 }, ...]
 */
export function parseClusterNodes(value: string): ClusterNodeAddress[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  if (items.length === 0)
    throw new StorageSettingError('REDIS_CLUSTER_NODES', 'expected host:port,host:port,... (no node given)')
  return items.map((item) => {
    const match = HOST_PORT.exec(item)
    const port = match ? Number(match[3]) : NaN
    if (!match || port < 1 || port > 65535) {
      throw new StorageSettingError(
        'REDIS_CLUSTER_NODES',
        `"${item}" is not host:port (expected host:port,host:port,...)`,
      )
    }
    return { host: match[1] ?? match[2], port }
  })
}

/**
 * The Redis key prefix. Braces are refused: a `{...}` in the prefix would become every key's
 * hash tag and put the whole service in one cluster slot, silently undoing the per-namespace tags.
 */
export function checkRedisPrefix(prefix: string): string {
  if (!prefix || /[{}]/.test(prefix))
    throw new StorageSettingError('REDIS_PREFIX', `"${prefix}" must be non-empty and contain no "{" or "}"`)
  return prefix
}

/**
 * The hash tag Redis Cluster places a key by (the first non-empty `{...}`, else the whole key).
 * Keys with the same tag share a slot; multi-key work must stay within one tag.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{')
  if (open === -1) return key
  const close = key.indexOf('}', open + 1)
  if (close === -1 || close === open + 1) return key
  return key.slice(open + 1, close)
}

/** Thrown before a multi-key operation whose keys would land in different cluster slots. */
export class CrossSlotError extends Error {
  constructor(keys: string[]) {
    super(`keys of different hash tags in one atomic operation (Redis Cluster refuses it): ${keys.join(', ')}`)
    this.name = 'CrossSlotError'
  }
}

/** Throws CrossSlotError unless every key carries the same hash tag. */
export function assertOneSlot(keys: string[]): void {
  if (keys.length < 2) return
  const tag = hashTagOf(keys[0])
  if (keys.some((key) => hashTagOf(key) !== tag)) throw new CrossSlotError(keys)
}
