import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wheel } from '../fixtures/ecosystems/packages'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { runClient } from './run'

// Debian's twine (4.0) uploading through a firewall to a loopback index, with the command of
// docs/clients.md (twine).

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
        id: 'reserved',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['fw-reserved*'] } },
        description: 'fw-reserved* names are reserved',
      },
    ],
  })
  token = await proxy.token('owner')
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

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
