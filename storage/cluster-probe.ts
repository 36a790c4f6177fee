import { Redis } from 'ioredis'
import type { ClusterAccess, ClusterNodeAddress } from './redis-target'

/**
 * Why no node of a cluster can be used: one plain connection per given node, with the same
 * credentials and TLS, answering `PING` or failing with the node's own reason (NOAUTH,
 * WRONGPASS, a certificate error, a refused connection). The cluster client itself only reports
 * "None of startup nodes is available". Null when a node answers after all.
 * @example await clusterNodeProblem([{ host: '10.0.0.1', port: 7000 }], { password }) // 'WRONGPASS ...'
 */
export async function clusterNodeProblem(nodes: ClusterNodeAddress[], access: ClusterAccess): Promise<string | null> {
  let problem: string | null = null
  for (const node of nodes) {
    const client = new Redis({
      ...node,
      ...access,
      lazyConnect: true,
      connectTimeout: 3_000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    // The node's own reason (a refused AUTH, a certificate) arrives here; the promises below then
    // only say the connection closed.
    let reason: string | undefined
    client.on('error', (error: Error) => (reason ??= error.message))
    try {
      await client.connect()
      if ((await client.ping()) === 'PONG') return null
    } catch (error) {
      problem ??= `${node.host}:${node.port}: ${reason ?? (error as Error).message}`
    } finally {
      client.disconnect()
    }
  }
  return problem
}
