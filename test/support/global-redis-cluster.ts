import { startRedisCluster, type RedisClusterHandle } from './redis-cluster'

let cluster: RedisClusterHandle | null = null

/**
 * vitest globalSetup: one 3-master Redis Cluster for the whole run (TEST_REDIS_CLUSTER_NODES
 * when set), handed to the workers through the environment. Not REDIS_CLUSTER_NODES: servers a
 * test spawns must not pick it up unless the test says so.
 */
export async function setup(): Promise<void> {
  if (process.env.TEST_REDIS_CLUSTER_NODES) return
  cluster = await startRedisCluster(3)
  process.env.TEST_REDIS_CLUSTER_NODES = cluster.nodes
}

export async function teardown(): Promise<void> {
  await cluster?.stop()
}
