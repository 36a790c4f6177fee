// Cold and warm install time of real clients through a firewall and against its upstream
// directly, in the same run: `npm run bench:clients`. Cold = empty client cache; warm = the cache
// of the cold run kept, a fresh project. One Verdaccio upstream, one in-process firewall.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startProxy } from '../test/registry/harness'
import { publishFixtures, nerfDart } from '../test/registry/npm-cli'
import { startVerdaccio } from '../test/support/verdaccio'
import { binOf, runClient } from '../test/clients/run'

const registry = await startVerdaccio()
await publishFixtures(registry.url, registry.token, [
  { name: 'fw-dep', version: '1.0.0', license: 'MIT' },
  { name: 'fw-ok', version: '1.0.0', license: 'MIT', dependencies: { 'fw-dep': '^1.0.0' } },
])
const proxy = await startProxy()
await proxy.putFirewall('web', {
  upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }],
  rules: [],
})
const token = await proxy.token('owner')

type Client = { name: string; run: (registryUrl: string, dir: string, home: string) => Promise<{ code: number }> }
const npmrc = (registryUrl: string, home: string) =>
  writeFileSync(join(home, '.npmrc'), `registry=${registryUrl}\n${nerfDart(registryUrl)}:_authToken=${token}\n`)
const env = (home: string) => ({ HOME: home, CI: '1', NO_COLOR: '1' })
const clients: Client[] = [
  {
    name: 'npm',
    run: (url, dir, home) => (
      npmrc(url, home),
      runClient('npm', ['install', 'fw-ok', '--no-audit', '--no-fund', `--cache=${join(home, 'cache')}`], {
        cwd: dir,
        env: env(home),
        bareEnv: true,
      })
    ),
  },
  {
    name: 'pnpm',
    run: (url, dir, home) => (
      npmrc(url, home),
      runClient(binOf('pnpm'), ['add', 'fw-ok', `--store-dir=${join(home, 'store')}`], {
        cwd: dir,
        env: env(home),
        bareEnv: true,
      })
    ),
  },
  {
    name: 'bun',
    run: (url, dir, home) => {
      writeFileSync(join(dir, 'bunfig.toml'), `[install]\nregistry = { url = "${url}", token = "${token}" }\n`)
      return runClient(binOf('bun'), ['add', 'fw-ok'], {
        cwd: dir,
        env: { ...env(home), BUN_INSTALL_CACHE_DIR: join(home, 'cache') },
        bareEnv: true,
      })
    },
  },
]

async function timed(client: Client, url: string, home: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-bench-project-'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench', version: '1.0.0', private: true }))
  const started = performance.now()
  const result = await client.run(url, dir, home)
  if (result.code !== 0) throw new Error(`${client.name} failed against ${url}`)
  return performance.now() - started
}

for (const client of clients) {
  for (const [label, url] of [
    ['direct', `${registry.url}/`],
    ['firewall', proxy.registryUrl('web')],
  ] as const) {
    const home = mkdtempSync(join(tmpdir(), 'pf-bench-home-'))
    mkdirSync(join(home, 'cache'), { recursive: true })
    const cold = await timed(client, url, home)
    const warm = await timed(client, url, home)
    console.log(
      `${client.name.padEnd(5)} ${label.padEnd(8)} cold ${cold.toFixed(0).padStart(5)} ms  warm ${warm.toFixed(0).padStart(5)} ms`,
    )
  }
}
await proxy.close()
await registry.stop()
