/** A Redis Cluster node given in REDIS_CLUSTER_NODES. */
export interface ClusterNodeAddress {
  host: string
  port: number
}

/**
 * How to reach a cluster's nodes beyond their addresses: credentials (`AUTH`, or an ACL user)
 * and TLS, as managed Redis Cluster offerings require. Applies to every node, discovered ones too.
 */
export interface ClusterAccess {
  username?: string
  password?: string
  /** TLS to every node; `ca`: PEM of the authority to trust instead of the system's. */
  tls?: { ca?: string }
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
  return items.map((item, index) => {
    const match = HOST_PORT.exec(item)
    const port = match ? Number(match[3]) : NaN
    if (!match || port < 1 || port > 65535) {
      // The entry itself is never echoed: a malformed one may hold a password (`:secret@host:7000`).
      throw new StorageSettingError(
        'REDIS_CLUSTER_NODES',
        `entry ${index + 1} of ${items.length} is not host:port (expected host:port,host:port,..., IPv6 as ` +
          '[addr]:port; credentials go in REDIS_CLUSTER_USERNAME and REDIS_CLUSTER_PASSWORD, not in the node list)',
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

/** The environment settings of cluster access (README, docs/deploy.md). */
interface ClusterAccessSettings {
  REDIS_CLUSTER_USERNAME?: string
  REDIS_CLUSTER_PASSWORD?: string
  REDIS_CLUSTER_TLS?: string
  REDIS_CLUSTER_TLS_CA?: string
}

/**
 * Cluster access from the environment. `REDIS_CLUSTER_TLS` is `true` or `false`; a CA file
 * (`REDIS_CLUSTER_TLS_CA`, PEM) implies TLS. Errors name the setting, never a password.
 * @example clusterAccess({ REDIS_CLUSTER_PASSWORD: 'secret', REDIS_CLUSTER_TLS: 'true' }, readFileSync)
 */
export function clusterAccess(env: ClusterAccessSettings, readFile: (path: string) => string): ClusterAccess {
  const flag = (env.REDIS_CLUSTER_TLS ?? '').trim().toLowerCase()
  if (!['', 'true', 'false'].includes(flag))
    throw new StorageSettingError('REDIS_CLUSTER_TLS', `expected true or false, got "${env.REDIS_CLUSTER_TLS}"`)
  let ca: string | undefined
  if (env.REDIS_CLUSTER_TLS_CA) {
    if (flag === 'false')
      throw new StorageSettingError('REDIS_CLUSTER_TLS_CA', 'a CA is set but REDIS_CLUSTER_TLS is false')
    try {
      ca = readFile(env.REDIS_CLUSTER_TLS_CA)
    } catch (error) {
      throw new StorageSettingError(
        'REDIS_CLUSTER_TLS_CA',
        `cannot read ${env.REDIS_CLUSTER_TLS_CA} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      )
    }
  }
  const tls = flag === 'true' || ca !== undefined
  return {
    ...(env.REDIS_CLUSTER_USERNAME ? { username: env.REDIS_CLUSTER_USERNAME } : {}),
    ...(env.REDIS_CLUSTER_PASSWORD ? { password: env.REDIS_CLUSTER_PASSWORD } : {}),
    ...(tls ? { tls: ca === undefined ? {} : { ca } } : {}),
  }
}
