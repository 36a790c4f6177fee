import { createStorage } from 'unstorage'
import { atomicFsDriver } from './atomic-fs-driver'
import { LocalBackend } from './local-backend'
import type { RedisBackend } from './redis-backend'
import { readFileSync } from 'node:fs'
import { clusterAccess, parseClusterNodes, StorageSettingError, type ClusterAccess } from './redis-target'
import type { Backend } from './backend'
import { migrateStorage, type MigrationOptions } from './migrations'

export * from './backend'
export { LocalBackend } from './local-backend'
// A type only: the Redis backend (and ioredis under it) is loaded when a Redis is configured
// (createBackend), not by every importer of storage; import the class from './redis-backend'.
export type { RedisBackend } from './redis-backend'
export { StorageSettingError } from './redis-target'

export interface BackendOptions {
  redisUrl?: string
  /** `host:port,host:port,...` of a Redis Cluster (REDIS_CLUSTER_NODES). */
  redisClusterNodes?: string
  /** Credentials and TLS for the cluster's nodes (REDIS_CLUSTER_USERNAME, _PASSWORD, _TLS, _TLS_CA). */
  redisClusterAccess?: ClusterAccess
  redisPrefix?: string
  dataDir?: string
}

/**
 * Chooses the driver at run time: a Redis Cluster when `REDIS_CLUSTER_NODES` is set, one Redis
 * when `REDIS_URL` is, else the fs driver. Rejects with StorageSettingError (naming the setting)
 * on a setting it cannot use. The Redis backend is imported only here, when one is configured:
 * ioredis costs about 0.1 s of CPU to load, which every start of an fs-backed service or admin
 * CLI paid for nothing.
 */
export async function createBackend(options: BackendOptions): Promise<Backend> {
  if (options.redisClusterNodes) {
    if (options.redisUrl)
      throw new StorageSettingError(
        'REDIS_CLUSTER_NODES',
        'set either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a cluster), not both',
      )
    const nodes = parseClusterNodes(options.redisClusterNodes)
    const { RedisBackend } = await import('./redis-backend')
    return new RedisBackend({ nodes, access: options.redisClusterAccess ?? {} }, options.redisPrefix ?? 'pf')
  }
  if (options.redisUrl) {
    const { RedisBackend } = await import('./redis-backend')
    return new RedisBackend(options.redisUrl, options.redisPrefix ?? 'pf')
  }
  const backend = new LocalBackend(createStorage({ driver: atomicFsDriver({ base: options.dataDir ?? './.data' }) }))
  try {
    // Transactions a stopped process left half written are finished before anything reads them.
    await backend.keyValue.recover()
  } catch (error) {
    await backend.close()
    throw error
  }
  return backend
}

/**
 * The backend, its stored data brought to the current layout first (storage/migrations/):
 * what the service and the admin CLI open. On a failed migration the backend is closed.
 * @example const backend = await openBackend(backendOptionsFromEnv(env))
 */
export async function openBackend(options: BackendOptions, migration: MigrationOptions = {}): Promise<Backend> {
  const backend = await createBackend(options)
  // A cluster the client cannot use rejects with "None of startup nodes is available" and prints
  // each failed refresh; the reason comes from a probe of the nodes (cluster-probe.ts).
  const cluster = options.redisClusterNodes ? (backend as RedisBackend).redis : null
  let unusable = false
  const noteUnusable = () => (unusable = true)
  cluster?.on('error', noteUnusable)
  try {
    await migrateStorage(backend, migration)
    return backend
  } catch (error) {
    await backend.close()
    const problem =
      unusable && options.redisClusterNodes
        ? await (
            await import('./cluster-probe')
          ).clusterNodeProblem(parseClusterNodes(options.redisClusterNodes), options.redisClusterAccess ?? {})
        : null
    if (problem)
      throw new StorageSettingError(
        'REDIS_CLUSTER_NODES',
        `no node of the cluster could be used (${problem}); check the node addresses and ` +
          'REDIS_CLUSTER_USERNAME, REDIS_CLUSTER_PASSWORD, REDIS_CLUSTER_TLS and REDIS_CLUSTER_TLS_CA',
      )
    throw error
  } finally {
    cluster?.off('error', noteUnusable)
  }
}

/** The storage settings (REDIS_*, DATA_DIR) from an environment: the composition root and the admin CLI pass their environment. */
export function backendOptionsFromEnv(env: NodeJS.ProcessEnv): BackendOptions {
  return {
    redisUrl: env.REDIS_URL || undefined,
    redisClusterNodes: env.REDIS_CLUSTER_NODES || undefined,
    redisClusterAccess: env.REDIS_CLUSTER_NODES ? clusterAccess(env, (path) => readFileSync(path, 'utf8')) : undefined,
    redisPrefix: env.REDIS_PREFIX || 'pf',
    dataDir: env.DATA_DIR || './.data',
  }
}
