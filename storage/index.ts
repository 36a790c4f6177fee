import { createStorage } from 'unstorage'
import { atomicFsDriver } from './atomic-fs-driver'
import { LocalBackend } from './local-backend'
import { RedisBackend } from './redis-backend'
import { parseClusterNodes, StorageSettingError } from './redis-target'
import type { Backend } from './backend'
import { migrateStorage, type MigrationOptions } from './migrations'

export * from './backend'
export { LocalBackend } from './local-backend'
export { RedisBackend } from './redis-backend'
export { StorageSettingError } from './redis-target'

export interface BackendOptions {
  redisUrl?: string
  /** `host:port,host:port,...` of a Redis Cluster (REDIS_CLUSTER_NODES). */
  redisClusterNodes?: string
  redisPrefix?: string
  dataDir?: string
}

/**
 * Chooses the driver at run time: a Redis Cluster when `REDIS_CLUSTER_NODES` is set, one Redis
 * when `REDIS_URL` is, else the fs driver. Throws StorageSettingError (naming the setting) on a
 * setting it cannot use.
 */
export function createBackend(options: BackendOptions = backendOptionsFromEnv()): Backend {
  if (options.redisClusterNodes) {
    if (options.redisUrl)
      throw new StorageSettingError(
        'REDIS_CLUSTER_NODES',
        'set either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a cluster), not both',
      )
    return new RedisBackend(parseClusterNodes(options.redisClusterNodes), options.redisPrefix ?? 'pf')
  }
  if (options.redisUrl) return new RedisBackend(options.redisUrl, options.redisPrefix ?? 'pf')
  return new LocalBackend(createStorage({ driver: atomicFsDriver({ base: options.dataDir ?? './.data' }) }))
}

/**
 * The backend, its stored data brought to the current layout first (storage/migrations/):
 * what the service and the admin CLI open. On a failed migration the backend is closed.
 * @example const backend = await openBackend()
 */
export async function openBackend(
  options: BackendOptions = backendOptionsFromEnv(),
  migration: MigrationOptions = {},
): Promise<Backend> {
  const backend = createBackend(options)
  try {
    await migrateStorage(backend, migration)
    return backend
  } catch (error) {
    await backend.close()
    throw error
  }
}

function backendOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BackendOptions {
  return {
    redisUrl: env.REDIS_URL || undefined,
    redisClusterNodes: env.REDIS_CLUSTER_NODES || undefined,
    redisPrefix: env.REDIS_PREFIX || 'pf',
    dataDir: env.DATA_DIR || './.data',
  }
}
