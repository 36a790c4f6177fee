import { spawn, spawnSync } from 'node:child_process'
import { freePort } from './server'
import { randomBytes } from 'node:crypto'

let started: string | null = null

/**
 * A real Redis for tests: `REDIS_URL` when set, else a private `redis-server` on a free
 * loopback port (stopped when the test process exits). Fails loudly when neither exists.
 */
export async function redisUrl(): Promise<string> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL
  started ??= (await privateRedis()).url
  return started
}

/**
 * A `redis-server` of the calling test file's own, whatever `REDIS_URL` says: for a test that
 * watches everything the server does (`MONITOR`), where another file's traffic on a shared Redis
 * races the client's monitor mode. Stopped by `stop` (a file's `afterAll`), else when the test
 * process exits.
 */
export async function privateRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    throw new Error('Redis tests need REDIS_URL or a redis-server binary: apt-get install redis-server')
  }
  const port = await freePort()
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)))
  })
  // Do not keep the test worker alive for this child; kill it when the worker exits.
  child.stdout!.removeAllListeners('data').destroy()
  child.removeAllListeners('exit')
  child.unref()
  const kill = () => child.kill('SIGKILL')
  process.once('exit', kill)
  const stop = async () => {
    process.off('exit', kill)
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    kill()
    await exited
  }
  return { url: `redis://127.0.0.1:${port}/0`, stop }
}

/** A unique key prefix so suites never see each other's data. */
export function uniquePrefix(label = 'test'): string {
  return `${label}-${randomBytes(6).toString('hex')}`
}
