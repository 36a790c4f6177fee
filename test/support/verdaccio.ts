import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { freePort } from './server'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'

/** A real npm registry (Verdaccio 6.8) on loopback, used as the firewall's upstream. */
export interface Verdaccio {
  url: string
  port: number
  /** The registry's process id (benchmarks read its CPU time from /proc). */
  pid: number
  storageDir: string
  /** Bearer token of the registry user `fixture` (publish rights). */
  token: string
  stop(): Promise<void>
}

// sha1 htpasswd and JWT tokens: with the default bcrypt every authenticated request costs ~65 ms.
// No uplinks: the sandbox has no internet, and a test registry must only hold fixtures.
function config(dir: string): string {
  return `storage: ${join(dir, 'storage')}
auth:
  htpasswd:
    file: ${join(dir, 'htpasswd')}
    algorithm: sha1
    max_users: 100
security:
  api:
    jwt:
      sign:
        expiresIn: 7d
uplinks: {}
packages:
  '@*/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
max_body_size: 100mb
server:
  keepAliveTimeout: 60
log: { type: stdout, format: json, level: warn }
`
}

function waitForListening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('http address')) {
        child.stdout!.off('data', onData)
        child.off('exit', onExit)
        resolve()
      }
    }
    const onExit = (code: number | null) => reject(new Error(`verdaccio exited with ${code}: ${output.slice(-2000)}`))
    child.stdout!.on('data', onData)
    child.once('exit', onExit)
  })
}

/**
 * Starts Verdaccio on a free loopback port with its storage in a temp dir and creates the
 * user `fixture`. Stopped by `stop()` (and killed when the test process exits).
 * @example const registry = await startVerdaccio(); await registry.stop()
 */
export async function startVerdaccio(): Promise<Verdaccio> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-verdaccio-'))
  mkdirSync(join(dir, 'storage'))
  writeFileSync(join(dir, 'config.yaml'), config(dir))
  const port = await freePort()
  const bin = join(createRequire(import.meta.url).resolve('verdaccio/package.json'), '..', 'bin', 'verdaccio')
  const child = spawn(process.execPath, [bin, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  })
  const kill = () => child.kill('SIGKILL')
  process.once('exit', kill)
  await waitForListening(child)
  // Keep reading so a chatty registry never blocks on a full pipe.
  child.stdout!.resume()
  const url = `http://127.0.0.1:${port}`
  const response = await fetch(`${url}/-/user/org.couchdb.user:fixture`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'fixture', password: 'fixture-password' }),
  })
  const { token } = (await response.json()) as { token: string }
  if (!token) throw new Error(`verdaccio did not create the fixture user (${response.status})`)
  return {
    url,
    port,
    pid: child.pid!,
    storageDir: join(dir, 'storage'),
    token,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off('exit', kill)
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/**
 * Rewrites the publish time of a version in Verdaccio's stored document, so rules on age
 * (`minimumAge`) see an old version. Verdaccio reads its storage on every request.
 */
export function setPublishTime(registry: Verdaccio, name: string, version: string, time: string): void {
  const file = join(registry.storageDir, name, 'package.json')
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { time: Record<string, string> }
  doc.time[version] = time
  if (doc.time.created && doc.time.created > time) doc.time.created = time
  writeFileSync(file, JSON.stringify(doc, null, 2))
}
