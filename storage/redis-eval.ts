import { createHash } from 'node:crypto'
import type { Cluster, Redis } from 'ioredis'

const digests = new Map<string, string>()

/**
 * Runs a Lua script by its SHA-1 (EVALSHA), sending the source only when the server does not
 * have it cached yet (NOSCRIPT: a restarted Redis, a cluster node seeing it first). The scripts
 * run on every transaction, lease and rate-limit hit; sending their text each time cost more
 * bytes than the data they carry.
 * @example await evalScript(client, LEASE_CALLS, 1, key, "r", owner, "0")
 */
export async function evalScript(
  client: Redis | Cluster,
  script: string,
  numKeys: number,
  ...args: string[]
): Promise<unknown> {
  let digest = digests.get(script)
  if (digest === undefined) {
    digest = createHash('sha1').update(script).digest('hex')
    digests.set(script, digest)
  }
  try {
    return await client.evalsha(digest, numKeys, ...args)
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
    return client.eval(script, numKeys, ...args)
  }
}
