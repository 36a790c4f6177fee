import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FixturePackage } from '../fixtures/npm-packages'

export interface NpmResult {
  code: number | null
  /** stdout and stderr together, as a user would see them. */
  output: string
}

/** The environment without npm_config_* (npx/vitest set some; they would override .npmrc). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value
  return { ...env, NO_UPDATE_NOTIFIER: '1', NPM_CONFIG_UPDATE_NOTIFIER: 'false' }
}

/** Runs the real npm CLI. */
export function runNpm(args: string[], cwd: string): Promise<NpmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, output }))
  })
}

/** `//host:port/path/` for a registry URL: the key npm stores its token under. */
export function nerfDart(registryUrl: string): string {
  const url = new URL(registryUrl)
  return `//${url.host}${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}`
}

/** A client set-up: its own .npmrc (registry + token), an empty global config and a private cache. */
export interface NpmClient {
  dir: string
  registry: string
  npm(args: string[], cwd?: string): Promise<NpmResult>
}

/**
 * A temp project (package.json) whose npm talks to `registry` with `token`, with its own
 * cache so every install really fetches tarballs.
 * @example const client = npmClient(proxyUrl, token); await client.npm(['install', 'fw-ok'])
 */
export function npmClient(registry: string, token: string): NpmClient {
  const dir = mkdtempSync(join(tmpdir(), 'pf-npm-'))
  const registryUrl = registry.endsWith('/') ? registry : `${registry}/`
  writeFileSync(join(dir, '.npmrc-user'), `registry=${registryUrl}\n${nerfDart(registryUrl)}:_authToken=${token}\n`)
  writeFileSync(join(dir, '.npmrc-global'), '')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fixture-project', version: '1.0.0', private: true }))
  const common = [
    `--userconfig=${join(dir, '.npmrc-user')}`,
    `--globalconfig=${join(dir, '.npmrc-global')}`,
    `--cache=${join(dir, '.cache')}`,
    '--no-audit',
    '--no-fund',
    '--prefer-online',
    '--fetch-retries=0',
    '--update-notifier=false',
  ]
  return { dir, registry: registryUrl, npm: (args, cwd = dir) => runNpm([...args, ...common], cwd) }
}

/** Writes a fixture package's directory (package.json + index.js) and returns it. */
export function writePackage(root: string, pkg: FixturePackage): string {
  const dir = join(root, `${pkg.name.replace('/', '__')}-${pkg.version}`)
  mkdirSync(dir, { recursive: true })
  const manifest = {
    name: pkg.name,
    version: pkg.version,
    description: `fixture ${pkg.name}`,
    main: 'index.js',
    license: pkg.license,
    scripts: pkg.scripts,
    dependencies: pkg.dependencies,
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2))
  writeFileSync(join(dir, 'index.js'), `module.exports = ${JSON.stringify(`${pkg.name}@${pkg.version}`)}\n`)
  return dir
}

/**
 * Publishes fixtures with `npm publish` to `registry`: versions of one name in order, names
 * in parallel (a few at a time).
 */
export async function publishFixtures(
  registry: string,
  token: string,
  packages: FixturePackage[],
  concurrency = 6,
): Promise<void> {
  const client = npmClient(registry, token)
  const byName = new Map<string, FixturePackage[]>()
  for (const pkg of packages) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg])
  const queue = [...byName.values()]
  const worker = async () => {
    for (let group = queue.shift(); group; group = queue.shift()) {
      for (const pkg of group) {
        const result = await client.npm(
          ['publish', '--access=public', '--ignore-scripts'],
          writePackage(client.dir, pkg),
        )
        if (result.code !== 0) throw new Error(`publishing ${pkg.name}@${pkg.version} failed:\n${result.output}`)
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}
