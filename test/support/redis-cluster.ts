import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { freePort } from './server'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Options of a cluster that asks for a password, or speaks only TLS (certificates made with openssl). */
export interface ClusterSecurity {
  password?: string
  tls?: boolean
}

/** A running Redis Cluster on loopback: `nodes` is what REDIS_CLUSTER_NODES takes. */
export interface RedisClusterHandle {
  /** With `tls`: the PEM file of the authority that signed the nodes' certificate. */
  caFile?: string
  /** `127.0.0.1:port,127.0.0.1:port,...` */
  nodes: string
  ports: number[]
  stop(): Promise<void>
}

/** A CA and a certificate for 127.0.0.1 signed by it, in `dir`; the nodes' extra arguments. */
function makeCertificates(dir: string): string[] {
  const file = (name: string) => join(dir, name)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n')
  for (const args of [
    ['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=pf-test-ca'],
    ['req', ...ec, '-keyout', file('node.key'), '-out', file('node.csr'), '-subj', '/CN=127.0.0.1'],
    ['x509', '-req', '-in', file('node.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial'],
  ]) {
    const extra = args[0] === 'x509' ? ['-out', file('node.crt'), '-days', '2', '-extfile', file('san.ext')] : []
    const result = spawnSync('openssl', [...args, ...extra], { encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`)
  }
  return [
    '--tls-cert-file',
    file('node.crt'),
    '--tls-key-file',
    file('node.key'),
    '--tls-ca-cert-file',
    file('ca.crt'),
    '--tls-cluster',
    'yes',
    '--tls-auth-clients',
    'no',
  ]
}

/** The arguments of one node: its ports (plain or TLS) and what `security` asks for. */
function nodeArgs(port: number, security: ClusterSecurity, tlsArgs: string[]): string[] {
  return [
    ...(security.tls ? ['--port', '0', '--tls-port', String(port), ...tlsArgs] : ['--port', String(port)]),
    ...(security.password ? ['--requirepass', security.password, '--masterauth', security.password] : []),
  ]
}

function startNode(dir: string, port: number, busPort: number, extra: string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      ...extra,
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
export async function startRedisCluster(masters = 3, security: ClusterSecurity = {}): Promise<RedisClusterHandle> {
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
    const tlsArgs = security.tls ? makeCertificates(dir) : []
    // How redis-cli reaches the nodes.
    const reach = [
      ...(security.tls ? ['--tls', '--cacert', join(dir, 'ca.crt')] : []),
      ...(security.password ? ['-a', security.password, '--no-auth-warning'] : []),
    ]
    const ports: number[] = []
    // Ports taken one after the other and held by the started node, so no two nodes collide.
    for (let i = 0; i < masters; i++) {
      const port = await freePort()
      const busPort = await freePort()
      const child = await startNode(dir, port, busPort, nodeArgs(port, security, tlsArgs))
      child.unref()
      children.push(child)
      ports.push(port)
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`)
    cli([...reach, '--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'])
    const deadline = Date.now() + 30_000
    for (const port of ports) {
      while (!cli([...reach, '-p', String(port), 'cluster', 'info']).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error(`the Redis Cluster did not reach cluster_state:ok (node ${port})`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    return { nodes: addresses.join(','), ports, stop, ...(security.tls ? { caFile: join(dir, 'ca.crt') } : {}) }
  } catch (error) {
    await stop()
    throw error
  }
}
