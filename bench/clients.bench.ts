// Cold and warm install time of real clients through a firewall and against its upstream
// directly, in the same run: `npm run bench:clients`. Cold = empty client cache; warm = the cache
// of the cold run kept, a fresh project. Each install takes a package with one transitive
// dependency. Upstreams: Verdaccio (npm, pnpm, yarn, bun), a loopback index (pip, poetry), a
// loopback Maven repository (Maven, Gradle). twine only uploads: it has no install to time.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startProxy } from '../test/registry/harness'
import { publishFixtures, nerfDart } from '../test/registry/npm-cli'
import { startVerdaccio } from '../test/support/verdaccio'
import { startPypiUpstream } from '../test/support/pypi-upstream'
import { startJvmFirewall } from '../test/clients/jvm-firewall'
import { wheelRequiring } from '../test/clients/python-packages'
import { binOf, runClient, type ClientRun } from '../test/clients/run'

/** Where a client installs from: the firewall (with its token) or the upstream itself. */
interface Target {
  label: 'direct' | 'firewall'
  url: string
  username: string
  password: string
}

interface Client {
  name: string
  targets: Target[]
  /** One install of the client's package into `dir`; `home` holds its cache across the two runs. */
  run(target: Target, dir: string, home: string): Promise<ClientRun>
  /** Untimed set-up of a fresh `home`, before the cold run. */
  prepare?(home: string): Promise<unknown>
}

const env = (home: string, extra: Record<string, string> = {}) => ({ HOME: home, CI: '1', NO_COLOR: '1', ...extra })
const write = (dir: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
}

// npm family: Verdaccio behind one firewall.
const registry = await startVerdaccio()
await publishFixtures(registry.url, registry.token, [
  { name: 'fw-dep', version: '1.0.0', license: 'MIT' },
  { name: 'fw-ok', version: '1.0.0', license: 'MIT', dependencies: { 'fw-dep': '^1.0.0' } },
])
const npmProxy = await startProxy()
await npmProxy.putFirewall('web', {
  upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }],
  rules: [],
})
const npmTargets: Target[] = [
  { label: 'direct', url: `${registry.url}/`, username: '', password: registry.token },
  { label: 'firewall', url: npmProxy.registryUrl('web'), username: '', password: await npmProxy.token('owner') },
]
const packageJson = (dir: string) =>
  write(dir, { 'package.json': JSON.stringify({ name: 'bench', version: '1.0.0', private: true }) })
const npmrc = (target: Target, home: string) =>
  write(home, { '.npmrc': `registry=${target.url}\n${nerfDart(target.url)}:_authToken=${target.password}\n` })

// Python: a loopback index behind a firewall.
const index = await startPypiUpstream()
for (const [name, requires] of [
  ['fw-app', ['fw-lib']],
  ['fw-lib', []],
] as const) {
  const { filename, bytes } = wheelRequiring(name, '1.0', [...requires])
  index.add(name, filename, bytes)
}
const pyProxy = await startProxy()
await pyProxy.putFirewall('py', { ecosystem: 'pypi', upstreams: [{ id: 'index', endpoint: index.url }], rules: [] })
const pyTargets: Target[] = [
  { label: 'direct', url: `${index.url}/simple/`, username: 'anyone', password: 'none' },
  {
    label: 'firewall',
    url: `${pyProxy.registryUrl('py')}simple/`,
    username: '__token__',
    password: await pyProxy.token('owner'),
  },
]

// JVM: a loopback Maven repository behind a firewall (the client tests' fixture).
const jvm = await startJvmFirewall()
jvm.seedArtifact('org.acme', 'app', '1.0', ['org.acme:lib:1.0'])
jvm.seedArtifact('org.acme', 'lib', '1.0')
const jvmTargets: Target[] = [
  { label: 'direct', url: `${jvm.upstream.url}/`, username: 'deployer', password: 'deployer-secret' },
  { label: 'firewall', url: jvm.proxy.registryUrl('jvm'), username: 'ci', password: jvm.token },
]
const consumerPom = `<project><modelVersion>4.0.0</modelVersion><groupId>org.consumer</groupId><artifactId>consumer</artifactId><version>1.0</version><dependencies><dependency><groupId>org.acme</groupId><artifactId>app</artifactId><version>1.0</version></dependency></dependencies></project>`

const clients: Client[] = [
  {
    name: 'npm',
    targets: npmTargets,
    run: (target, dir, home) => (
      packageJson(dir),
      npmrc(target, home),
      runClient('npm', ['install', 'fw-ok', '--no-audit', '--no-fund', `--cache=${join(home, 'cache')}`], {
        cwd: dir,
        env: env(home),
        bareEnv: true,
      })
    ),
  },
  {
    name: 'pnpm',
    targets: npmTargets,
    run: (target, dir, home) => (
      packageJson(dir),
      npmrc(target, home),
      runClient(binOf('pnpm'), ['add', 'fw-ok', `--store-dir=${join(home, 'store')}`], {
        cwd: dir,
        env: env(home),
        bareEnv: true,
      })
    ),
  },
  {
    name: 'yarn',
    targets: npmTargets,
    run: (target, dir, home) => {
      packageJson(dir)
      write(dir, {
        '.yarnrc.yml': `npmRegistryServer: '${target.url}'\nnpmAuthToken: '${target.password}'\nnpmAlwaysAuth: true\nunsafeHttpWhitelist:\n  - 127.0.0.1\n`,
      })
      return runClient(process.execPath, [binOf('yarn'), 'add', 'fw-ok'], {
        cwd: dir,
        env: env(home, {
          YARN_ENABLE_TELEMETRY: '0',
          YARN_GLOBAL_FOLDER: join(home, 'yarn'),
          YARN_NPM_MINIMAL_AGE_GATE: '0',
          YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
        }),
        bareEnv: true,
      })
    },
  },
  {
    name: 'bun',
    targets: npmTargets,
    run: (target, dir, home) => {
      packageJson(dir)
      write(dir, { 'bunfig.toml': `[install]\nregistry = { url = "${target.url}", token = "${target.password}" }\n` })
      return runClient(binOf('bun'), ['add', 'fw-ok'], {
        cwd: dir,
        env: env(home, { BUN_INSTALL_CACHE_DIR: join(home, 'cache') }),
        bareEnv: true,
      })
    },
  },
  {
    name: 'pip',
    targets: pyTargets,
    run: (target, dir, home) =>
      runClient(
        'python3',
        [
          '-m',
          'pip',
          'install',
          '--index-url',
          target.url.replace('://', `://${target.username}:${target.password}@`),
          '--target',
          join(dir, 'site'),
          `--cache-dir=${join(home, 'cache')}`,
          'fw-app',
        ],
        {
          cwd: dir,
          env: env(home, { PIP_CONFIG_FILE: '/dev/null', PIP_DISABLE_PIP_VERSION_CHECK: '1' }),
          bareEnv: true,
        },
      ),
  },
  {
    name: 'poetry',
    targets: pyTargets,
    run: (target, dir, home) => {
      write(dir, {
        'pyproject.toml':
          `[tool.poetry]\nname = "bench"\nversion = "0.1.0"\ndescription = ""\nauthors = ["ci <ci@example.com>"]\n\n` +
          `[tool.poetry.dependencies]\npython = "^3.8"\nfw-app = "1.0"\n\n` +
          `[[tool.poetry.source]]\nname = "firewall"\nurl = "${target.url}"\ndefault = true\n`,
      })
      return runClient('poetry', ['install', '--no-root', '--no-interaction'], {
        cwd: dir,
        env: env(home, {
          POETRY_HTTP_BASIC_FIREWALL_USERNAME: target.username,
          POETRY_HTTP_BASIC_FIREWALL_PASSWORD: target.password,
          POETRY_VIRTUALENVS_IN_PROJECT: 'true',
          POETRY_CACHE_DIR: join(home, 'cache'),
          PYTHON_KEYRING_BACKEND: 'keyring.backends.null.Keyring',
        }),
        bareEnv: true,
      })
    },
  },
  {
    name: 'maven',
    targets: jvmTargets,
    // The local repository starts as Debian's (the build's plugins), as in the Maven tests.
    prepare: (home) => runClient('cp', ['-rs', '/usr/share/maven-repo', join(home, 'repository')], { cwd: home }),
    run: (target, dir, home) => {
      const repo = join(home, 'repository')
      write(dir, {
        'pom.xml': consumerPom,
        'settings.xml': `<settings><mirrors><mirror><id>firewall</id><mirrorOf>*</mirrorOf><url>${target.url}</url></mirror></mirrors><servers><server><id>firewall</id><username>${target.username}</username><password>${target.password}</password></server></servers></settings>`,
      })
      return runClient('mvn', ['-B', '-q', '-s', 'settings.xml', `-Dmaven.repo.local=${repo}`, 'compile'], {
        cwd: dir,
        env: env(home, { PATH: process.env.PATH! }),
      })
    },
  },
  {
    name: 'gradle',
    targets: jvmTargets,
    run: (target, dir, home) => {
      write(dir, {
        'build.gradle': `repositories { maven { url = '${target.url}'; credentials { username = '${target.username}'; password = '${target.password}' } } }
configurations { deps }
dependencies { deps 'org.acme:app:1.0' }
task resolve { doLast { configurations.deps.files.each { println it.name } } }
`,
      })
      return runClient('gradle', ['--no-daemon', '-q', '--gradle-user-home', join(home, 'gradle'), 'resolve'], {
        cwd: dir,
        env: env(home, { PATH: process.env.PATH! }),
      })
    },
  },
]

/** One timed install into a fresh project; the client's output is printed if it fails. */
async function timed(client: Client, target: Target, home: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-bench-project-'))
  const started = performance.now()
  const result = await client.run(target, dir, home)
  const elapsed = performance.now() - started
  if (result.code !== 0) throw new Error(`${client.name} failed against ${target.url}:\n${result.output}`)
  return elapsed
}

const only = process.env.BENCH_CLIENTS?.split(',')
try {
  for (const client of clients) {
    if (only && !only.includes(client.name)) continue
    for (const target of client.targets) {
      const home = mkdtempSync(join(tmpdir(), 'pf-bench-home-'))
      mkdirSync(join(home, 'cache'), { recursive: true })
      await client.prepare?.(home)
      const cold = await timed(client, target, home)
      const warm = await timed(client, target, home)
      console.log(
        `${client.name.padEnd(6)} ${target.label.padEnd(8)} cold ${cold.toFixed(0).padStart(6)} ms  warm ${warm.toFixed(0).padStart(6)} ms`,
      )
    }
  }
  console.log('twine  (uploads only: no install to time)')
} finally {
  await npmProxy.close()
  await registry.stop()
  await pyProxy.close()
  await index.close()
  await jvm.close()
}
