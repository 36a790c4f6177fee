import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBackend, type Backend } from '../../storage'
import { redisUrl, uniquePrefix } from './redis'

/** The real drivers contract suites must hold on: fs and one Redis. */
export const BACKEND_KINDS = ['fs', 'redis'] as const
/** `cluster`: the run's 3-master Redis Cluster (test/support/global-redis-cluster.ts). */
export type BackendKind = (typeof BACKEND_KINDS)[number] | 'cluster'

/** The nodes of the run's shared Redis Cluster (test/support/global-redis-cluster.ts). */
export function clusterNodes(): string {
  const nodes = process.env.TEST_REDIS_CLUSTER_NODES
  if (!nodes) throw new Error('no Redis Cluster: run through vitest (globalSetup starts one) or set TEST_REDIS_CLUSTER_NODES')
  return nodes
}

export async function makeBackend(kind: BackendKind): Promise<Backend> {
  if (kind === 'redis') return createBackend({ redisUrl: await redisUrl(), redisPrefix: uniquePrefix() })
  if (kind === 'cluster') return createBackend({ redisClusterNodes: clusterNodes(), redisPrefix: uniquePrefix() })
  return createBackend({ dataDir: mkdtempSync(join(tmpdir(), 'pf-store-')) })
}
