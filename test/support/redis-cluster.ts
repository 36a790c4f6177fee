import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { freePort } from './server'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A running Redis Cluster on loopback: `nodes` is what REDIS_CLUSTER_NODES takes. */
export interface RedisClusterHandle {
  /** `127.0.0.1:port,127.0.0.1:port,...` */
  nodes: string
  ports: number[]
  stop(): Promise<void>
}

function startNode(dir: string, port: number, busPort: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      // Redis 7 takes the bus port explicitly, so port+10000 need not be free.
      '--cluster-port',
      String(busPort),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      '5000',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        child.stdout!.removeAllListeners('data').resume()
        child.stderr!.resume()
        child.removeAllListeners('exit')
        resolve(child)
      }
    })
    child.once('exit', (code) => reject(new Error(`redis-server on ${port} exited with ${code}:\n${output}`)))
  })
}

function cli(args: string[]): string {
  const result = spawnSync('redis-cli', args, { encoding: 'utf8', timeout: 30_000 })
  if (result.status !== 0)
    throw new Error(`redis-cli ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`)
  return result.stdout
}

/**
 * Starts a real Redis Cluster of `masters` masters (no replicas, no persistence) with Debian's
 * `redis-server` and `redis-cli --cluster create`, and waits until every node reports
 * `cluster_state:ok`. `stop()` kills the nodes and removes their directory; the nodes are also
 * killed when this process exits, so a crashed run leaves nothing behind.
 * @example const cluster = await startRedisCluster(); createBackend({ redisClusterNodes: cluster.nodes })
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  if (spawnSync('redis-server', ['--version']).status !== 0 || spawnSync('redis-cli', ['--version']).status !== 0) {
    throw new Error(
      'The Redis Cluster suites need the redis-server and redis-cli binaries: apt-get install redis-server',
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'pf-redis-cluster-'))
  const children: ChildProcess[] = []
  const killAll = () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  process.once('exit', killAll)
  const stop = async () => {
    process.off('exit', killAll)
    await Promise.all(
      children.map((child) =>
        // Ended already (an exit code, or a signal: exitCode stays null then), so no 'exit' is coming.
        child.exitCode !== null || child.signalCode !== null
          ? undefined
          : new Promise<void>((resolve) => {
              // Held again while it ends: an unreferenced child would let the process exit before its 'exit' event.
              child.ref()
              child.once('exit', () => resolve())
              child.kill('SIGKILL')
            }),
      ),
    )
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const ports: number[] = []
    // Ports taken one after the other and held by the started node, so no two nodes collide.
    for (let i = 0; i < masters; i++) {
      const port = await freePort()
      const busPort = await freePort()
      const child = await startNode(dir, port, busPort)
      child.unref()
      children.push(child)
      ports.push(port)
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`)
    cli(['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'])
    const deadline = Date.now() + 30_000
    for (const port of ports) {
      while (!cli(['-p', String(port), 'cluster', 'info']).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error(`the Redis Cluster did not reach cluster_state:ok (node ${port})`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    return { nodes: addresses.join(','), ports, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
