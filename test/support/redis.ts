import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { freePort } from './server'
import { randomBytes } from 'node:crypto'

let started: { url: string; process: ChildProcess } | null = null

/**
 * A real Redis for tests: `REDIS_URL` when set, else a private `redis-server` on a free
 * loopback port (stopped when the test process exits). Fails loudly when neither exists.
 */
export async function redisUrl(): Promise<string> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL
  if (started) return started.url
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
  process.once('exit', () => child.kill('SIGKILL'))
  started = { url: `redis://127.0.0.1:${port}/0`, process: child }
  return started.url
}

/** A unique key prefix so suites never see each other's data. */
export function uniquePrefix(label = 'test'): string {
  return `${label}-${randomBytes(6).toString('hex')}`
}
