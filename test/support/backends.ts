import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBackend, type Backend } from '../../storage'
import { redisUrl, uniquePrefix } from './redis'

/** The real drivers contract suites must hold on: fs, one Redis and a 3-master Redis Cluster. */
export const BACKEND_KINDS = ['fs', 'redis', 'cluster'] as const
export type BackendKind = (typeof BACKEND_KINDS)[number]

/** The nodes of the run's shared Redis Cluster (test/support/global-redis-cluster.ts). */
export function clusterNodes(): string {
  const nodes = process.env.TEST_REDIS_CLUSTER_NODES
  if (!nodes)
    throw new Error('no Redis Cluster: run through vitest (globalSetup starts one) or set TEST_REDIS_CLUSTER_NODES')
  return nodes
}

export async function makeBackend(kind: BackendKind): Promise<Backend> {
  if (kind === 'redis') return createBackend({ redisUrl: await redisUrl(), redisPrefix: uniquePrefix() })
  if (kind === 'cluster') return createBackend({ redisClusterNodes: clusterNodes(), redisPrefix: uniquePrefix() })
  return createBackend({ dataDir: mkdtempSync(join(tmpdir(), 'pf-store-')) })
}

/** Storage several server processes can share. */
export const SHARED_STORAGES = ['redis', 'cluster'] as const
export type SharedStorage = (typeof SHARED_STORAGES)[number]

/** The environment that puts a server on shared storage under a fresh prefix. */
export async function sharedStorageEnv(kind: SharedStorage, label: string): Promise<Record<string, string>> {
  const location: Record<string, string> =
    kind === 'cluster' ? { REDIS_CLUSTER_NODES: clusterNodes() } : { REDIS_URL: await redisUrl() }
  return { ...location, REDIS_PREFIX: uniquePrefix(label) }
}

/** A backend on the storage a server environment names (fs data dir, one Redis or a cluster). */
export function backendOfEnv(env: Record<string, string | undefined>): Promise<Backend> {
  return createBackend({
    redisUrl: env.REDIS_URL,
    redisClusterNodes: env.REDIS_CLUSTER_NODES,
    redisPrefix: env.REDIS_PREFIX ?? 'pf',
    dataDir: env.DATA_DIR,
  })
}
