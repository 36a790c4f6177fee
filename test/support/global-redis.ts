import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { freePort } from './server'

let child: ChildProcess | null = null

/**
 * vitest globalSetup: Redis suites use REDIS_URL when set; otherwise one private
 * redis-server is started here (in the main process, so it is stopped for sure at the end)
 * and its URL handed to every test worker through the environment.
 */
export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    throw new Error('The Redis test suites need REDIS_URL or the redis-server binary: apt-get install redis-server')
  }
  const port = await freePort()
  child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  await new Promise<void>((resolve, reject) => {
    child!.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Ready to accept connections') && resolve())
    child!.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)))
  })
  child.stdout!.destroy()
  process.env.REDIS_URL = `redis://127.0.0.1:${port}/0`
}

export async function teardown(): Promise<void> {
  child?.kill('SIGKILL')
}
