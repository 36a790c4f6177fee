import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { wheel } from '../fixtures/ecosystems/packages'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { wheelRequiring } from './python-packages'
import { documentedSnippet, runClient } from './run'

/** The firewall URL of the documented Python snippets; tests replace only this. */
const DOCUMENTED_PY_URL = 'http://localhost:3000/registry/default/py/'

// Real Python clients through a firewall whose upstream is a loopback index: Debian's twine (4.0)
// and poetry (1.3), and pip (the machine's python3), configured as docs/clients.md says.

let upstream: PypiUpstream
let proxy: ProxyHarness
let token: string

beforeAll(async () => {
  upstream = await startPypiUpstream({ password: 'index-secret' })
  proxy = await startProxy()
  await proxy.putFirewall('py', {
    ecosystem: 'pypi',
    upstreams: [
      {
        id: 'index',
        endpoint: upstream.url,
        credentials: { username: 'uploader', password: 'index-secret' },
        internal: true,
      },
    ],
    rules: [
      {
        id: 'no-evil',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['fw-blocked*'] } },
        description: 'fw-blocked* packages are banned',
      },
      {
        id: 'reserved',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['fw-reserved*'] } },
        description: 'fw-reserved* names are reserved',
      },
    ],
  })
  token = await proxy.token('owner')
  for (const [name, requires] of [
    ['fw-app', ['fw-lib']],
    ['fw-lib', []],
    ['fw-blocked', []],
  ] as const) {
    const { filename, bytes } = wheelRequiring(name, '1.0', [...requires])
    upstream.add(name, filename, bytes)
  }
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

/** `twine upload` of one wheel, as docs/clients.md writes the command. */
async function twineUpload(name: string) {
  const dir = mkdtempSync(join(tmpdir(), 'pf-twine-'))
  mkdirSync(join(dir, 'dist'))
  const { filename, bytes } = wheel(name, '1.0')
  writeFileSync(join(dir, 'dist', filename), bytes)
  return runClient(
    'twine',
    [
      'upload',
      '--non-interactive',
      '--repository-url',
      `${proxy.registryUrl('py')}legacy/`,
      '-u',
      '__token__',
      '-p',
      token,
      `dist/${filename}`,
    ],
    { cwd: dir, env: { HOME: dir, NO_COLOR: '1' }, bareEnv: true },
  )
}

describe('twine through a firewall', () => {
  it('uploads to the internal upstream', async () => {
    const run = await twineUpload('fw-twine-ok')
    expect(run.code, run.output).toBe(0)
    expect(upstream.uploads.at(-1)).toMatchObject({ filename: 'fw_twine_ok-1.0-py3-none-any.whl' })
  })

  it('a blocked upload prints the rule, the request id and the exception link', async () => {
    const before = upstream.uploads.length
    const run = await twineUpload('fw-reserved-x')
    expect(run.code).not.toBe(0)
    // twine (rich) colours and wraps to the terminal width: compare the words.
    // eslint-disable-next-line no-control-regex
    const text = run.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\s+/g, ' ')
    const url = proxy.registryUrl('py')
    expect(text).toMatch(
      new RegExp(
        escape(
          `ERROR HTTPError: 403 Forbidden from ${url}legacy/ fw-reserved-x@1.0 is blocked by firewall py rule reserved: fw-reserved* names are reserved [package name matches fw-reserved*]. Request id: `,
        ) + 'req-[0-9a-z]+',
      ),
    )
    expect(upstream.uploads.length).toBe(before)
  })
})

/** `pip install` into a fresh target directory as docs/clients.md writes it: the token in the index URL. */
function pipInstall(args: string[], files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'pf-pip-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  const index = proxy.registryUrl('py').replace('://', `://__token__:${token}@`) + 'simple/'
  return runClient(
    'python3',
    ['-m', 'pip', 'install', '--index-url', index, '--target', join(dir, 'site'), '--no-cache-dir', ...args],
    {
      cwd: dir,
      env: { HOME: dir, PIP_CONFIG_FILE: '/dev/null', PIP_DISABLE_PIP_VERSION_CHECK: '1', NO_COLOR: '1' },
      bareEnv: true,
    },
  )
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

describe('pip through a firewall', () => {
  it('installs a package with its dependency', async () => {
    const run = await pipInstall(['fw-app'])
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('Successfully installed fw-app-1.0 fw-lib-1.0')
  })

  it('--require-hashes checks every file against the pinned hashes', async () => {
    const app = sha256(wheelRequiring('fw-app', '1.0', ['fw-lib']).bytes)
    const lib = sha256(wheelRequiring('fw-lib', '1.0', []).bytes)
    const requirements = (libHash: string) => `fw-app==1.0 --hash=sha256:${app}\nfw-lib==1.0 --hash=sha256:${libHash}\n`
    const ok = await pipInstall(['--require-hashes', '-r', 'requirements.txt'], {
      'requirements.txt': requirements(lib),
    })
    expect(ok.code, ok.output).toBe(0)
    expect(ok.output).toContain('Successfully installed fw-app-1.0 fw-lib-1.0')
    const wrong = lib.replace(/^./, (c) => (c === '0' ? '1' : '0'))
    const refused = await pipInstall(['--require-hashes', '-r', 'requirements.txt'], {
      'requirements.txt': requirements(wrong),
    })
    expect(refused.code).not.toBe(0)
    expect(refused.output).toContain('THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE')
    expect(refused.output).toContain(`Expected sha256 ${wrong}`)
    expect(refused.output).toContain(`Got        ${lib}`)
  })

  it('a blocked install prints the rule, the request id and the exception link', async () => {
    const run = await pipInstall(['fw-blocked'])
    const url = proxy.registryUrl('py')
    expect(run.code).not.toBe(0)
    const file = `${url}files/fw-blocked/fw_blocked-1.0-py3-none-any.whl`
    expect(run.output).toContain(`ERROR: HTTP error 403 while getting ${file} (from ${url}simple/fw-blocked/)`)
    expect(run.output).toMatch(
      new RegExp(
        escape(
          `ERROR: Could not install requirement fw-blocked from ${file} because of HTTP error 403 Client Error: fw-blocked@1.0 is blocked by firewall py rule no-evil: fw-blocked* packages are banned [package name matches fw-blocked*]. Request id: `,
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/py/exception-requests/new?request=`,
          ) +
          '\\1' +
          escape(` for url: ${file}`),
      ),
    )
  })
})

/** A poetry project depending on `dependency`, the firewall its only source (Debian's poetry 1.3: `default = true`). */
function poetryProject(dependency: string): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'pf-poetry-'))
  writeFileSync(
    join(dir, 'pyproject.toml'),
    `[tool.poetry]\nname = "consumer"\nversion = "0.1.0"\ndescription = ""\nauthors = ["ci <ci@example.com>"]\n\n` +
      `[tool.poetry.dependencies]\npython = "^3.8"\n${dependency} = "1.0"\n\n` +
      `[[tool.poetry.source]]\nname = "firewall"\nurl = "${proxy.registryUrl('py')}simple/"\ndefault = true\n`,
  )
  const env = {
    HOME: dir,
    POETRY_HTTP_BASIC_FIREWALL_USERNAME: '__token__',
    POETRY_HTTP_BASIC_FIREWALL_PASSWORD: token,
    POETRY_VIRTUALENVS_IN_PROJECT: 'true',
    POETRY_CACHE_DIR: join(dir, '.cache'),
    NO_COLOR: '1',
  }
  return { dir, env }
}

const poetry = (args: string[], project: { dir: string; env: Record<string, string> }) =>
  runClient('poetry', [...args, '--no-interaction'], { cwd: project.dir, env: project.env, bareEnv: true })

describe('poetry through a firewall', () => {
  it('locks and installs a dependency with its transitive dependency; a changed lock hash fails the install', async () => {
    const project = poetryProject('fw-app')
    const run = await poetry(['install', '--no-root'], project)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('Installing fw-lib (1.0)')
    expect(run.output).toContain('Installing fw-app (1.0)')
    const lock = readFileSync(join(project.dir, 'poetry.lock'), 'utf8')
    const libHash = createHash('sha256')
      .update(wheelRequiring('fw-lib', '1.0', []).bytes)
      .digest('hex')
    expect(lock).toContain(`sha256:${libHash}`)
    // The same lock with fw-lib's hash changed, in a fresh project and cache: poetry refuses the file.
    const tampered = poetryProject('fw-app')
    writeFileSync(
      join(tampered.dir, 'poetry.lock'),
      lock.replace(
        libHash,
        libHash.replace(/^./, (c) => (c === '0' ? '1' : '0')),
      ),
    )
    const refused = await poetry(['install', '--no-root'], tampered)
    expect(refused.code).not.toBe(0)
    expect(refused.output).toContain(
      `Retrieved digest for link fw_lib-1.0-py3-none-any.whl(sha256:${libHash}) not in poetry.lock metadata`,
    )
  }, 180_000)

  it('a blocked dependency prints the rule, the request id and the exception link', async () => {
    const run = await poetry(['install', '--no-root'], poetryProject('fw-blocked'))
    const url = proxy.registryUrl('py')
    expect(run.code).not.toBe(0)
    expect(run.output).toMatch(
      new RegExp(
        escape(
          '403 Client Error: fw-blocked@1.0 is blocked by firewall py rule no-evil: fw-blocked* packages are banned [package name matches fw-blocked*]. Request id: ',
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/py/exception-requests/new?request=`,
          ) +
          '\\1' +
          escape(` for url: ${url}files/fw-blocked/fw_blocked-1.0-py3-none-any.whl#sha256=`),
      ),
    )
  }, 180_000)
})

/** A poetry package `name` 1.0 with the documented publish commands (docs/clients.md, poetry), run as written. */
async function poetryPublish(name: string) {
  const dir = mkdtempSync(join(tmpdir(), 'pf-poetry-pub-'))
  const module = name.replace(/-/g, '_')
  mkdirSync(join(dir, module))
  writeFileSync(join(dir, module, '__init__.py'), 'VERSION = "1.0"\n')
  writeFileSync(
    join(dir, 'pyproject.toml'),
    `[tool.poetry]\nname = "${name}"\nversion = "1.0"\ndescription = ""\nauthors = ["ci <ci@example.com>"]\n\n` +
      `[tool.poetry.dependencies]\npython = "^3.8"\n\n` +
      `[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n`,
  )
  const commands = documentedSnippet('docs/clients.md', '`pyproject.toml` names the firewall', 'sh')
  const script = commands.replaceAll(DOCUMENTED_PY_URL, proxy.registryUrl('py'))
  expect(script).toContain(`poetry config repositories.firewall-upload ${proxy.registryUrl('py')}legacy/`)
  return runClient('sh', ['-ec', script], {
    cwd: dir,
    env: {
      HOME: dir,
      FIREWALL_TOKEN: token,
      PYTHON_KEYRING_BACKEND: 'keyring.backends.null.Keyring',
      POETRY_CACHE_DIR: join(dir, '.cache'),
      NO_COLOR: '1',
    },
    bareEnv: true,
  })
}

describe('poetry publish through a firewall', () => {
  it('builds and uploads the sdist and the wheel to the internal upstream', async () => {
    const run = await poetryPublish('fw-poetry-pub')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('Publishing fw-poetry-pub (1.0) to firewall-upload')
    expect(upstream.uploads.map((upload) => upload.filename)).toEqual(
      expect.arrayContaining(['fw_poetry_pub-1.0-py3-none-any.whl', 'fw_poetry_pub-1.0.tar.gz']),
    )
  }, 180_000)

  it('a blocked publish prints the rule, the request id and the exception link', async () => {
    const before = upstream.uploads.length
    const run = await poetryPublish('fw-reserved-poetry')
    expect(run.code).not.toBe(0)
    expect(run.output).toMatch(
      new RegExp(
        escape(
          'HTTP Error 403: fw-reserved-poetry@1.0 is blocked by firewall py rule reserved: fw-reserved* names are reserved [package name matches fw-reserved*]. Request id: ',
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/py/exception-requests/new?request=`,
          ) +
          '\\1',
      ),
    )
    expect(upstream.uploads.length).toBe(before)
  }, 180_000)
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
