import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FixturePackage } from '../fixtures/npm-packages'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { publishFixtures } from '../registry/npm-cli'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { binOf, documentedSnippet, runClient } from './run'

// pnpm, yarn (berry) and bun, installed from npm as devDependencies, against one Verdaccio
// upstream through one firewall, each configured as docs/clients.md says.
const DOCUMENTED = 'http://localhost:3000/registry/default/web/'

const FIXTURES: FixturePackage[] = [
  { name: 'fw-dep', version: '1.0.0', license: 'MIT' },
  { name: 'fw-ok', version: '1.0.0', license: 'MIT', dependencies: { 'fw-dep': '^1.0.0' } },
  { name: 'fw-blocked-name', version: '1.0.0', license: 'MIT' },
  // One version blocked (rule one-blocked), the other allowed.
  { name: 'fw-partial', version: '1.0.0', license: 'MIT' },
  { name: 'fw-partial', version: '2.0.0', license: 'MIT' },
]

let registry: Verdaccio
let proxy: ProxyHarness
let token: string
let url: string

/** The environment of one client run (with `bareEnv`): a private HOME for user-level config. */
const clientEnv = (home: string): Record<string, string> => ({
  HOME: home,
  FIREWALL_TOKEN: token,
  NO_UPDATE_NOTIFIER: '1',
  NO_COLOR: '1',
  CI: '1',
})

/** A fresh project holding `files`, its own HOME beside it. */
function project(files: Record<string, string>): { dir: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), 'pf-client-'))
  const dir = join(root, 'project')
  const home = join(root, 'home')
  mkdirSync(dir)
  mkdirSync(home)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return { dir, home }
}

/** A documented snippet with the test firewall's URL (and host) in place of the example's. */
const withUrl = (snippet: string) =>
  snippet
    .replaceAll(DOCUMENTED.slice('http:'.length), url.slice('http:'.length))
    .replace(/^(\s+)- localhost$/m, '$1- 127.0.0.1')

/** The test firewall; `exceptions` as approved exception requests leave them. */
const webFirewall = (exceptions: unknown[] = []) => ({
  upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }],
  rules: [
    {
      id: 'no-evil',
      executionPhase: 'download',
      selector: { function: { name: 'packageName', patterns: ['fw-blocked-*'] } },
      description: 'fw-blocked-* packages are banned',
    },
    {
      id: 'one-blocked',
      executionPhase: 'download',
      selector: { function: { name: 'versionRange', package: 'fw-partial', range: '1.0.0' } },
      description: 'fw-partial 1.0.0 is banned',
    },
    {
      id: 'reserved',
      executionPhase: 'upload',
      selector: { function: { name: 'packageName', patterns: ['fw-reserved-*'] } },
      description: 'fw-reserved-* names are reserved',
    },
  ],
  exceptions,
})

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, FIXTURES)
  proxy = await startProxy()
  await proxy.putFirewall('web', webFirewall())
  token = await proxy.token('owner')
  url = proxy.registryUrl('web')
}, 120_000)

afterAll(async () => {
  await proxy?.close()
  await registry?.stop()
})

/** The upstream's integrity of a fixture version (what every lockfile must record). */
async function upstreamIntegrity(name: string, version: string): Promise<string> {
  const doc = (await (await fetch(`${registry.url}/${name}`)).json()) as {
    versions: Record<string, { dist: { integrity: string } }>
  }
  return doc.versions[version].dist.integrity
}

/** A package directory to publish (`name@1.0.0`), with the client's config files. */
function publishable(name: string, files: Record<string, string>): { dir: string; home: string } {
  const where = project(files)
  writeFileSync(join(where.dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', license: 'MIT' }))
  writeFileSync(join(where.dir, 'index.js'), 'module.exports = 1\n')
  return where
}

/** Copies a project's manifest and lockfile into a fresh project, the lockfile edited by `edit`. */
function fromLockfile(
  source: string,
  lockfile: string,
  files: Record<string, string>,
  edit: (lock: string) => string,
): { dir: string; home: string } {
  const where = project(files)
  cpSync(join(source, 'package.json'), join(where.dir, 'package.json'))
  writeFileSync(join(where.dir, lockfile), edit(readFileSync(join(source, lockfile), 'utf8')))
  return where
}

const tamper = (lock: string, integrity: string) => {
  expect(lock).toContain(integrity)
  // One base64 digit of the digest changed (after `sha512-`): still well-formed, no longer true.
  const wrong = `${integrity.slice(0, 10)}${integrity[10] === 'A' ? 'B' : 'A'}${integrity.slice(11)}`
  return lock.replaceAll(integrity, wrong)
}

const published = async (name: string) => (await fetch(`${registry.url}/${name}`)).status

describe('npm (project .npmrc)', () => {
  const npm = (args: string[], where: { dir: string; home: string }) =>
    runClient('npm', [...args, '--no-audit', '--no-fund', `--cache=${join(where.home, 'cache')}`], {
      cwd: where.dir,
      env: clientEnv(where.home),
      bareEnv: true,
    })
  const config = () => ({ '.npmrc': withUrl(documentedSnippet('docs/clients.md', '### npm', 'ini')) })
  let installedDir = ''

  it('installs a package with its dependency; the lockfile holds the upstream integrity', async () => {
    const where = project(config())
    const run = await npm(['install', 'fw-ok'], where)
    expect(run.code, run.output).toBe(0)
    expect(existsSync(join(where.dir, 'node_modules/fw-dep/package.json'))).toBe(true)
    const lock = readFileSync(join(where.dir, 'package-lock.json'), 'utf8')
    expect(lock).toContain(`"resolved": "${url}fw-dep/-/fw-dep-1.0.0.tgz"`)
    expect(lock).toContain(await upstreamIntegrity('fw-dep', '1.0.0'))
    installedDir = where.dir
  })

  it('npm ci checks the lockfile integrity against what the firewall serves', async () => {
    const integrity = await upstreamIntegrity('fw-dep', '1.0.0')
    const where = fromLockfile(installedDir, 'package-lock.json', config(), (lock) => tamper(lock, integrity))
    // --fetch-retries=0: npm otherwise fetches the mismatching tarball again for a minute.
    const run = await npm(['ci', '--fetch-retries=0'], where)
    expect(run.code).not.toBe(0)
    expect(run.output).toContain('npm error code EINTEGRITY')
    expect(run.output).toContain('integrity checksum failed when using sha512: wanted sha512-')
  })

  it('a blocked install prints the body: the rule, the request id and the exception link', async () => {
    const run = await npm(['install', 'fw-blocked-name'], project(config()))
    expect(run.code).not.toBe(0)
    expect(run.output).toMatch(
      new RegExp(
        escape(
          `npm error 403 403 Forbidden - GET ${url}fw-blocked-name/-/fw-blocked-name-1.0.0.tgz - fw-blocked-name@1.0.0 is blocked by firewall web rule no-evil: fw-blocked-* packages are banned [package name matches fw-blocked-*]. Request id: `,
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/web/exception-requests/new?request=`,
          ) +
          '\\1',
      ),
    )
  })

  it('publishes with npm publish; a blocked publish shows the rule', async () => {
    const ok = await npm(['publish'], publishable('fw-npm-pub', config()))
    expect(ok.code, ok.output).toBe(0)
    expect(await published('fw-npm-pub')).toBe(200)
    const blocked = await npm(['publish'], publishable('fw-reserved-npm', config()))
    expect(blocked.code).not.toBe(0)
    expect(blocked.output).toContain(
      `npm error 403 403 Forbidden - PUT ${url}fw-reserved-npm - fw-reserved-npm@1.0.0 is blocked by firewall web rule reserved: fw-reserved-* names are reserved [package name matches fw-reserved-*]. Request id: req-`,
    )
    expect(await published('fw-reserved-npm')).toBe(404)
  })
})

describe('pnpm (user-level ~/.npmrc)', () => {
  const pnpm = (args: string[], where: { dir: string; home: string }) =>
    runClient(binOf('pnpm'), [...args, `--store-dir=${join(where.home, 'store')}`], {
      cwd: where.dir,
      env: clientEnv(where.home),
      bareEnv: true,
    })
  const home = (where: { dir: string; home: string }) => {
    writeFileSync(join(where.home, '.npmrc'), withUrl(documentedSnippet('docs/clients.md', '### pnpm', 'ini')))
    return where
  }
  let installedDir = ''
  let partialNotice = ''

  it('installs a package with its dependency; the lockfile holds the upstream integrity', async () => {
    const where = home(project({}))
    const run = await pnpm(['add', 'fw-ok'], where)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('+ fw-ok 1.0.0')
    expect(existsSync(join(where.dir, 'node_modules/.pnpm/fw-dep@1.0.0'))).toBe(true)
    const lock = readFileSync(join(where.dir, 'pnpm-lock.yaml'), 'utf8')
    expect(lock).toContain(await upstreamIntegrity('fw-dep', '1.0.0'))
    installedDir = where.dir
  })

  it('a frozen install checks the lockfile integrity against what the firewall serves', async () => {
    const integrity = await upstreamIntegrity('fw-dep', '1.0.0')
    // pnpm-workspace.yaml too: pnpm 12 wrote the young fixtures into its minimumReleaseAgeExclude.
    // fetchRetries: 0, or pnpm retries the mismatching tarball after 10 s.
    const workspace = `fetchRetries: 0\n${readFileSync(join(installedDir, 'pnpm-workspace.yaml'), 'utf8')}`
    const where = home(
      fromLockfile(installedDir, 'pnpm-lock.yaml', { 'pnpm-workspace.yaml': workspace }, (lock) =>
        tamper(lock, integrity),
      ),
    )
    const run = await pnpm(['install', '--frozen-lockfile'], where)
    expect(run.code).not.toBe(0)
    expect(run.output).toContain('Error: ERR_PNPM_TARBALL_INTEGRITY')
    expect(run.output.replace(/\n\s+/g, '')).toContain(
      `Failed to verify the integrity of ${url}fw-dep/-/fw-dep-1.0.0.tgz: Integrity check failed.`,
    )
  })

  it('a blocked install prints the block message with the request id (pnpm 12 fetches the packument once)', async () => {
    const blocks = async () => (await proxy.log('web', { packageName: 'fw-blocked-name', blocked: true })).length
    const before = await blocks()
    const run = await pnpm(['add', 'fw-blocked-name'], home(project({})))
    expect(run.code).not.toBe(0)
    // pnpm wraps its message at 80 columns, at spaces and inside long URLs: compared without white space.
    const printed = run.output.replace(/\s+/g, '')
    const match = new RegExp(
      'Error:ERR_PNPM_PACKAGE_MANAGER_ADD_RESOLVE_LATEST×addinganewpackage╰─▶' +
        bare(
          `Failed to resolve the latest version of fw-blocked-name: Failed to fetch metadata from ${url}fw-blocked-name: HTTP status client error (403 fw-blocked-name@1.0.0 is blocked by firewall web rule no-evil: fw-blocked-* packages are banned [package name matches fw-blocked-*]. Request id: `,
        ) +
        '(req-[0-9a-z]+)' +
        bare(`. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/web/exception-requests/new?request=`) +
        '\\1\\)',
    ).exec(printed)
    expect(match, run.output).not.toBeNull()
    // Logged once, under the id pnpm printed.
    const logged = await proxy.log('web', { requestId: match![1] })
    expect(
      logged.map((entry) => ('packageName' in entry ? [entry.packageName, entry.version, entry.blocked] : entry)),
    ).toEqual([['fw-blocked-name', '1.0.0', true]])
    expect(await blocks()).toBe(before + 1)
  })

  it('some versions blocked: pnpm 12 prints a notice URL naming the request id and the rule, logged once under it', async () => {
    const blocks = async () => (await proxy.log('web', { packageName: 'fw-partial', blocked: true })).length
    const before = await blocks()
    const run = await pnpm(['add', 'fw-partial@1.0.0'], home(project({})))
    expect(run.code).not.toBe(0)
    const match = new RegExp(
      'Error:ERR_PNPM_TARBALL_(?:HTTP_STATUS|SIBLING_FETCH_FAILED)×addinganewpackage╰─▶' +
        bare(`Tarball server returned HTTP 403 for ${url}-/blocked/`) +
        '(req-[0-9a-z]+)' +
        bare('/one-blocked/') +
        '([A-Za-z0-9_-]{22})' +
        bare('/fw-partial/-/fw-partial-1.0.0.tgz'),
    ).exec(run.output.replace(/\s+/g, ''))
    expect(match, run.output).not.toBeNull()
    const logged = await proxy.log('web', { requestId: match![1] })
    expect(
      logged.map((entry) => ('packageName' in entry ? [entry.packageName, entry.version, entry.blocked] : entry)),
    ).toEqual([['fw-partial', '1.0.0', true]])
    expect(await blocks()).toBe(before + 1)
    partialNotice = `${url}-/blocked/${match![1]}/one-blocked/${match![2]}/fw-partial/-/fw-partial-1.0.0.tgz`
  })

  it('each store resolves its own request id; pnpm reuses its cached packument (and the id) within one store', async () => {
    const idOf = (output: string) => /\/-\/blocked\/(req-[0-9a-z]+)\//.exec(output.replace(/\s+/g, ''))?.[1]
    const where = home(project({}))
    const first = idOf((await pnpm(['add', 'fw-partial@~1.0.0'], where)).output)
    const other = idOf((await pnpm(['add', 'fw-partial@~1.0.0'], home(project({})))).output)
    const again = idOf((await pnpm(['add', 'fw-partial@~1.0.0'], where)).output)
    expect(first).toMatch(/^req-/)
    expect(other).toMatch(/^req-/)
    expect(other).not.toBe(first)
    // Without an ETag there is nothing to revalidate, but pnpm 12 keeps the packument in its
    // metadata cache and reads it again within its freshness window: the same notice URL.
    expect(again).toBe(first)
    for (const id of [first, other])
      expect((await proxy.log('web', { requestId: id })).every((entry) => 'blocked' in entry && entry.blocked)).toBe(
        true,
      )
  })

  it('a notice is decided again: still blocked 403 under its id, forged 400, garbage 404, allowed after an exception', async () => {
    const get = (target: string) =>
      fetch(target, {
        headers: { authorization: `Bearer ${token}`, 'user-agent': 'pnpm/12.21.0 npm/? node/? linux x64' },
      })
    const id = /req-[0-9a-z]+/.exec(partialNotice)![0]
    const still = await get(partialNotice)
    expect(still.status).toBe(403)
    expect(still.statusText).toMatch(
      new RegExp(`^fw-partial@1\\.0\\.0 is blocked by firewall web rule one-blocked: .* Request id: ${id}\\. `),
    )
    const forged = await get(partialNotice.replace(id, 'req-0mwz00000000000000000000'))
    expect(forged.status).toBe(400)
    expect(await forged.json()).toMatchObject({ status: 400, code: 'block_notice_signature_invalid' })
    const otherVersion = await get(partialNotice.replaceAll('1.0.0', '2.0.0'))
    expect(otherVersion.status).toBe(400)
    const garbage = await get(`${url}-/blocked/req-abc/one-blocked/short/fw-partial/-/fw-partial-1.0.0.tgz`)
    expect(garbage.status).toBe(404)
    expect(await garbage.json()).toMatchObject({ status: 404, code: 'block_notice_not_found' })
    const exception = {
      id: 'ex-partial',
      rule: 'one-blocked',
      selector: { packageName: 'fw-partial', version: '1.0.0' },
    }
    await proxy.putFirewall('web', webFirewall([exception]))
    try {
      const served = await get(partialNotice)
      expect(served.status).toBe(200)
      const digest = createHash('sha512')
        .update(Buffer.from(await served.arrayBuffer()))
        .digest('base64')
      expect(`sha512-${digest}`).toBe(await upstreamIntegrity('fw-partial', '1.0.0'))
    } finally {
      await proxy.putFirewall('web', webFirewall())
    }
  })

  it('from a lockfile (no packument fetched), pnpm 12 prints only the status and the tarball URL', async () => {
    const swap = (text: string) => text.replaceAll('fw-dep', 'fw-blocked-name')
    const integrity = await upstreamIntegrity('fw-dep', '1.0.0')
    const blockedIntegrity = await upstreamIntegrity('fw-blocked-name', '1.0.0')
    const workspace = swap(readFileSync(join(installedDir, 'pnpm-workspace.yaml'), 'utf8'))
    const where = home(
      fromLockfile(installedDir, 'pnpm-lock.yaml', { 'pnpm-workspace.yaml': workspace }, (lock) =>
        swap(lock.replaceAll(integrity, blockedIntegrity)),
      ),
    )
    const before = (await proxy.log('web', { packageName: 'fw-blocked-name', blocked: true })).length
    const run = await pnpm(['install', '--frozen-lockfile'], where)
    expect(run.code).not.toBe(0)
    // The code is TARBALL_HTTP_STATUS, or TARBALL_SIBLING_FETCH_FAILED when a second fetch of the URL waited on the first.
    expect(run.output.replace(/\s+/g, '')).toMatch(
      new RegExp(
        'Error:ERR_PNPM_TARBALL_(?:HTTP_STATUS|SIBLING_FETCH_FAILED)×installingdependencies╰─▶' +
          bare(`Tarball server returned HTTP 403 for ${url}fw-blocked-name/-/fw-blocked-name-1.0.0.tgz`),
      ),
    )
    // The body, the reason phrase and a redirect's target are dropped by pnpm 12 (docs/clients.md).
    expect(run.output).not.toContain('Request id')
    expect(await proxy.log('web', { packageName: 'fw-blocked-name', blocked: true })).toHaveLength(before + 1)
  })

  it('pnpm 12 prints the reason phrase of a refused packument', async () => {
    const run = await pnpm(['add', 'fw-missing'], home(project({})))
    expect(run.code).not.toBe(0)
    expect(run.output.replace(/\n\s+/g, ' ')).toContain(
      `Failed to fetch metadata from ${url}fw-missing: HTTP status client error (404 package fw-missing was not found on any upstream of firewall web)`,
    )
  })

  it('a project .npmrc with the token variable is ignored by pnpm 12 (why the docs use ~/.npmrc)', async () => {
    const snippet = withUrl(documentedSnippet('docs/clients.md', '### pnpm', 'ini'))
    const run = await pnpm(['add', 'fw-ok'], project({ '.npmrc': snippet }))
    expect(run.code).not.toBe(0)
    expect(run.output).toContain('environment variables are not expanded in repository-controlled registry credentials')
    expect(run.output.replace(/\n\s+/g, ' ')).toContain('HTTP status client error (401 ')
  })

  it('the documented pnpm config set commands configure pnpm 12 instead of ~/.npmrc', async () => {
    const where = project({})
    const commands = withUrl(documentedSnippet('docs/clients.md', 'or, the same two settings', 'sh'))
    expect(commands).toContain('pnpm config set registry ')
    const env = { ...clientEnv(where.home), PATH: `${dirname(binOf('pnpm'))}:${process.env.PATH}` }
    const set = await runClient('sh', ['-ec', commands], { cwd: where.dir, env, bareEnv: true })
    expect(set.code, set.output).toBe(0)
    const run = await pnpm(['add', 'fw-ok'], where)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('+ fw-ok 1.0.0')
  })

  it('publishes to the upstream with credentials; a blocked publish shows the rule', async () => {
    const ok = await pnpm(['publish', '--no-git-checks'], home(publishable('fw-pnpm-pub', {})))
    expect(ok.code, ok.output).toBe(0)
    expect(await published('fw-pnpm-pub')).toBe(200)
    const blocked = await pnpm(['publish', '--no-git-checks'], home(publishable('fw-reserved-pnpm', {})))
    expect(blocked.code).not.toBe(0)
    // pnpm wraps the body it prints in a box: `│ ` line starts.
    const text = blocked.output.replace(/\n\s*│ /g, ' ')
    expect(text).toContain(
      'Failed to publish package fw-reserved-pnpm@1.0.0 (status 403 Forbidden): {"error":"fw-reserved-pnpm@1.0.0 is blocked by firewall web rule reserved: fw-reserved-* names are reserved [package name matches fw-reserved-*]. Request id: req-',
    )
    expect(await published('fw-reserved-pnpm')).toBe(404)
  })
})

describe('yarn 4 (project .yarnrc.yml)', () => {
  const yarn = (args: string[], where: { dir: string; home: string }) =>
    runClient(process.execPath, [binOf('yarn'), ...args], {
      cwd: where.dir,
      env: {
        ...clientEnv(where.home),
        YARN_ENABLE_TELEMETRY: '0',
        YARN_ENABLE_GLOBAL_CACHE: 'false',
        // The fixtures were published seconds ago; yarn 4 quarantines young versions by default.
        YARN_NPM_MINIMAL_AGE_GATE: '0',
        YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
      },
      bareEnv: true,
    })
  const config = () => ({ '.yarnrc.yml': withUrl(documentedSnippet('docs/clients.md', '### yarn', 'yaml')) })
  let installedDir = ''

  it('installs a package with its dependency', async () => {
    const where = project(config())
    const run = await yarn(['add', 'fw-ok'], where)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('YN0085: │ + fw-ok@npm:1.0.0, fw-dep@npm:1.0.0')
    expect(readFileSync(join(where.dir, 'yarn.lock'), 'utf8')).toContain('"fw-dep@npm:^1.0.0":')
    installedDir = where.dir
  })

  it('an immutable install checks the lockfile checksums against what the firewall serves', async () => {
    const lock = readFileSync(join(installedDir, 'yarn.lock'), 'utf8')
    const checksum = /checksum: (\S+)/.exec(lock)![1]
    const where = fromLockfile(installedDir, 'yarn.lock', config(), (text) =>
      text.replace(
        checksum,
        checksum.replace(/[0-9a-f]$/, (c) => (c === '0' ? '1' : '0')),
      ),
    )
    const run = await yarn(['install', '--immutable'], where)
    expect(run.code).not.toBe(0)
    expect(run.output).toContain("YN0018: │ fw-dep@npm:1.0.0: The remote archive doesn't match the expected checksum")
  })

  it('a blocked install shows the rule, the request id and the exception link in the response code line', async () => {
    const run = await yarn(['add', 'fw-blocked-name'], project(config()))
    expect(run.code).not.toBe(0)
    expect(run.output).toMatch(
      new RegExp(
        escape(
          'YN0035: │   Response Code: 403 (fw-blocked-name@1.0.0 is blocked by firewall web rule no-evil: fw-blocked-* packages are banned [package name matches fw-blocked-*]. Request id: ',
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/web/exception-requests/new?request=`,
          ) +
          '\\1\\)',
      ),
    )
  })

  it('publishes with yarn npm publish; a blocked publish shows the rule', async () => {
    const where = publishable('fw-yarn-pub', config())
    expect((await yarn(['install'], where)).code).toBe(0)
    const ok = await yarn(['npm', 'publish'], where)
    expect(ok.code, ok.output).toBe(0)
    expect(await published('fw-yarn-pub')).toBe(200)
    const reserved = publishable('fw-reserved-yarn', config())
    expect((await yarn(['install'], reserved)).code).toBe(0)
    const blocked = await yarn(['npm', 'publish'], reserved)
    expect(blocked.code).not.toBe(0)
    expect(blocked.output).toContain(
      `YN0035: fw-reserved-yarn@1.0.0 is blocked by firewall web rule reserved: fw-reserved-* names are reserved [package name matches fw-reserved-*]. Request id: req-`,
    )
    // The reason phrase is for downloads only: here yarn prints the body, so it would be said twice.
    expect(blocked.output).toContain('YN0035:   Response Code: 403 (Forbidden)')
    expect(await published('fw-reserved-yarn')).toBe(404)
  })
})

describe('bun (project bunfig.toml)', () => {
  const bun = (args: string[], where: { dir: string; home: string }) =>
    runClient(binOf('bun'), args, {
      cwd: where.dir,
      env: { ...clientEnv(where.home), BUN_INSTALL_CACHE_DIR: join(where.home, 'cache') },
      bareEnv: true,
    })
  const config = () => ({ 'bunfig.toml': withUrl(documentedSnippet('docs/clients.md', '### bun', 'toml')) })
  let installedDir = ''

  it('installs a package with its dependency; the lockfile holds the upstream integrity', async () => {
    const where = project(config())
    const run = await bun(['add', 'fw-ok'], where)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('installed fw-ok@1.0.0')
    expect(existsSync(join(where.dir, 'node_modules/fw-dep/package.json'))).toBe(true)
    expect(readFileSync(join(where.dir, 'bun.lock'), 'utf8')).toContain(await upstreamIntegrity('fw-dep', '1.0.0'))
    installedDir = where.dir
  })

  it('a frozen install checks the lockfile integrity against what the firewall serves', async () => {
    const integrity = await upstreamIntegrity('fw-dep', '1.0.0')
    const where = fromLockfile(installedDir, 'bun.lock', config(), (lock) => tamper(lock, integrity))
    const run = await bun(['install', '--frozen-lockfile'], where)
    expect(run.code).not.toBe(0)
    expect(run.output).toContain('error: Integrity check failed for tarball: fw-dep')
  })

  it('a blocked install prints the request id, the package and the rule in the URL bun shows', async () => {
    const run = await bun(['add', 'fw-blocked-name'], project(config()))
    expect(run.code).not.toBe(0)
    expect(run.output).toMatch(
      new RegExp(
        escape(`error: GET ${url}-/blocked/`) + 'req-[0-9a-z]+' + escape('/fw-blocked-name%401.0.0/rule/no-evil - 403'),
      ),
    )
  })

  it('publishes with bun publish; a blocked publish shows the rule', async () => {
    const ok = await bun(['publish'], publishable('fw-bun-pub', config()))
    expect(ok.code, ok.output).toBe(0)
    expect(await published('fw-bun-pub')).toBe(200)
    const blocked = await bun(['publish'], publishable('fw-reserved-bun', config()))
    expect(blocked.code).not.toBe(0)
    expect(blocked.output).toContain(
      `403 Forbidden: ${url}fw-reserved-bun\n\n - fw-reserved-bun@1.0.0 is blocked by firewall web rule reserved: fw-reserved-* names are reserved [package name matches fw-reserved-*]. Request id: req-`,
    )
    expect(await published('fw-reserved-bun')).toBe(404)
  })
})

describe('reason phrases by client', () => {
  const tarball = (userAgent: string) =>
    fetch(`${url}fw-blocked-name/-/fw-blocked-name-1.0.0.tgz`, {
      headers: { authorization: `Bearer ${token}`, 'user-agent': userAgent },
      redirect: 'manual',
    })

  it('npm gets the plain phrase (it prints the body after it: no repeat); yarn and pnpm get the reason', async () => {
    expect((await tarball('npm/10.9.2 node/v20.19.0 linux x64 workspaces/false')).statusText).toBe('Forbidden')
    expect((await tarball('got (https://github.com/sindresorhus/got)')).statusText).toMatch(
      /^fw-blocked-name@1\.0\.0 is blocked by firewall web rule no-evil: .* Request id: req-/,
    )
    expect((await tarball('pnpm/9.15.0 npm/? node/v20.19.0 linux x64')).statusText).toContain('is blocked by firewall')
    // pnpm 12's User-Agent: the phrase too (it prints it for packuments), no redirect.
    const pnpm12 = await tarball('pnpm/12.21.0 npm/? node/? linux x64')
    expect(pnpm12.status).toBe(403)
    expect(pnpm12.statusText).toContain('is blocked by firewall')
  })

  it('only pnpm 12 and later are refused a packument whose every version is blocked; the rest is unchanged', async () => {
    const packument = (name: string, userAgent: string) =>
      fetch(`${url}${name}`, { headers: { authorization: `Bearer ${token}`, 'user-agent': userAgent } })
    const refused = await packument('fw-blocked-name', 'pnpm/12.21.0 npm/? node/? linux x64')
    expect(refused.status).toBe(403)
    expect(refused.statusText).toBe(
      `fw-blocked-name@1.0.0 is blocked by firewall web rule no-evil: fw-blocked-* packages are banned [package name matches fw-blocked-*]. Request id: ${refused.headers.get('x-request-id')}. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/web/exception-requests/new?request=${refused.headers.get('x-request-id')}`,
    )
    for (const userAgent of [
      'npm/10.9.2 node/v20.19.0 linux x64',
      'pnpm/11.9.0 npm/? node/v22.0.0 linux x64',
      'Bun/1.4.5',
    ])
      expect((await packument('fw-blocked-name', userAgent)).status).toBe(200)
    expect((await packument('fw-ok', 'pnpm/12.21.0 npm/? node/? linux x64')).status).toBe(200)
  })

  it('pnpm 12 gets notice URLs for blocked versions, uncached and unrevalidatable; other clients the cached document', async () => {
    const packument = (userAgent: string, accept = 'application/vnd.npm.install-v1+json') =>
      fetch(`${url}fw-partial`, { headers: { authorization: `Bearer ${token}`, 'user-agent': userAgent, accept } })
    const before = (await proxy.log('web', { packageName: 'fw-partial' })).length
    const pnpm12 = await packument('pnpm/12.21.0 npm/? node/? linux x64')
    expect(pnpm12.status).toBe(200)
    expect(pnpm12.headers.get('etag')).toBeNull()
    expect(pnpm12.headers.get('last-modified')).toBeNull()
    expect(pnpm12.headers.get('cache-control')).toBe('no-store')
    const doc = (await pnpm12.json()) as { versions: Record<string, { dist: { tarball: string } }> }
    expect(doc.versions['1.0.0'].dist.tarball).toMatch(
      new RegExp(
        `^${escape(url)}-/blocked/req-[0-9a-z]+/one-blocked/[A-Za-z0-9_-]{22}/fw-partial/-/fw-partial-1\\.0\\.0\\.tgz$`,
      ),
    )
    expect(doc.versions['2.0.0'].dist.tarball).toBe(`${url}fw-partial/-/fw-partial-2.0.0.tgz`)
    // No decision is logged for serving the packument.
    expect(await proxy.log('web', { packageName: 'fw-partial' })).toHaveLength(before)
    for (const userAgent of [
      'npm/10.9.2 node/v20.19.0 linux x64',
      'pnpm/11.9.0 npm/? node/v22.0.0 linux x64',
      'Bun/1.4.5',
    ]) {
      const other = await packument(userAgent)
      expect(other.headers.get('etag')).toMatch(/^"/)
      const body = (await other.json()) as typeof doc
      expect(body.versions['1.0.0'].dist.tarball).toBe(`${url}fw-partial/-/fw-partial-1.0.0.tgz`)
    }
    // A package with no blocked version: pnpm 12 gets the cached document and its ETag as before.
    const ok = await fetch(`${url}fw-ok`, {
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'pnpm/12.21.0 npm/? node/? linux x64' },
    })
    expect(ok.headers.get('etag')).toMatch(/^"/)
  })

  it('bun is redirected to a notice that names the request id; the notice trusts nothing else of its path', async () => {
    const redirect = await tarball('Bun/1.4.5')
    expect(redirect.status).toBe(307)
    const location = redirect.headers.get('location')!
    const id = redirect.headers.get('x-request-id')!
    expect(location).toBe(`${url}-/blocked/${id}/fw-blocked-name%401.0.0/rule/no-evil`)
    const notice = await fetch(location.replace('no-evil', 'made-up'), {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(notice.status).toBe(403)
    expect(((await notice.json()) as { error: string }).error).toBe(
      `blocked by firewall web. Request id: ${id}. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/web/exception-requests/new?request=${id}`,
    )
    const bogus = await fetch(`${url}-/blocked/not-an-id`, { headers: { authorization: `Bearer ${token}` } })
    expect(bogus.status).toBe(404)
  })
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** A pattern of `text` without its white space (pnpm wraps lines at spaces and inside long URLs). */
const bare = (text: string) => escape(text.replace(/\s+/g, ''))
