import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { wheel } from '../fixtures/ecosystems/packages'

// CONTRACT section 8, "decide on what is forwarded": a legacy upload's file name must parse as
// a wheel or sdist of the form's name and version; otherwise 400 and nothing forwarded.

let upstream: PypiUpstream
let proxy: ProxyHarness
let token: string

beforeAll(async () => {
  upstream = await startPypiUpstream({ password: 'upstream-secret' })
  proxy = await startProxy({ backend: 'redis' })
  await proxy.putFirewall('py', {
    ecosystem: 'pypi',
    upstreams: [
      {
        id: 'internal-py',
        endpoint: upstream.url,
        credentials: { username: 'ci', password: 'upstream-secret' },
        internal: true,
      },
    ],
    rules: [
      {
        id: 'no-evil',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['fw-evil*'] } },
        description: 'fw-evil* names are reserved',
      },
      {
        id: 'no-ranged-2',
        executionPhase: 'upload',
        selector: { function: { name: 'versionRange', package: 'fw-ranged', range: '>=2.0' } },
        description: 'fw-ranged 2 is not to be published',
      },
    ],
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

interface Part {
  name: string
  value: string | Buffer
  /** Written into the Content-Disposition header as given (quotes and all), for hostile names. */
  disposition?: string
}

/** A multipart body written by hand: what twine sends, or what no client would. */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = 'test-boundary-7d3f'
  const chunks = parts.flatMap((part) => [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.disposition ?? ''}` +
        `${part.disposition ? '\r\nContent-Type: application/octet-stream' : ''}\r\n\r\n`,
    ),
    Buffer.from(part.value),
    Buffer.from('\r\n'),
  ])
  return {
    body: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  }
}

/** twine's fields for an upload of `file` declared as `name` `version`. */
function twineParts(name: string, version: string, file: { filename: string; bytes: Buffer }): Part[] {
  return [
    { name: ':action', value: 'file_upload' },
    { name: 'protocol_version', value: '1' },
    { name: 'metadata_version', value: '2.1' },
    { name: 'name', value: name },
    { name: 'version', value: version },
    { name: 'filetype', value: 'bdist_wheel' },
    { name: 'pyversion', value: 'py3' },
    { name: 'content', value: file.bytes, disposition: `; filename="${file.filename}"` },
  ]
}

function upload(parts: Part[]): Promise<Response> {
  const { body, contentType } = multipart(parts)
  return fetch(`${proxy.registryUrl('py')}legacy/`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`__token__:${token}`).toString('base64')}`,
      'content-type': contentType,
    },
    body: new Uint8Array(body),
  })
}

describe('PyPI legacy upload: the file must be what the form names', () => {
  it('refuses name=good with fw_evil-1.0-py3-none-any.whl: 400 naming both, nothing reaches the upstream', async () => {
    const before = upstream.uploads.length
    const response = await upload(twineParts('good', '1.0', wheel('fw-evil', '1.0')))
    expect(response.status).toBe(400)
    // twine prints the status line.
    expect(response.statusText).toContain('fw-evil')
    expect(response.statusText).toContain('good')
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(await response.json()).toMatchObject({
      status: 400,
      code: 'upload_name_mismatch',
      declared: 'good',
      found: 'fw_evil',
    })
    expect(upstream.uploads.length).toBe(before)
    expect(await proxy.log('py', { packageName: 'good' })).toEqual([])
  })

  it('refuses a file name holding ../../ (and a backslash), whatever it parses as', async () => {
    const before = upstream.uploads.length
    for (const filename of ['../../fw_good-1.0-py3-none-any.whl', '..\\fw_good-1.0-py3-none-any.whl']) {
      const { bytes } = wheel('fw-good', '1.0')
      const response = await upload(twineParts('fw-good', '1.0', { filename, bytes }))
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({
        code: 'upload_file_name_invalid',
        declared: 'fw-good',
        found: filename,
      })
    }
    expect(upstream.uploads.length).toBe(before)
  })

  it('refuses a file of another version than the form names (the >=2.0 rule would block it)', async () => {
    const before = upstream.uploads.length
    const response = await upload(twineParts('fw-ranged', '1.0', wheel('fw-ranged', '2.0')))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ code: 'upload_version_mismatch', declared: '1.0', found: '2.0' })
    expect(upstream.uploads.length).toBe(before)
  })

  it('refuses a file name undici and the upstream would read differently (filename*) and a repeated name field', async () => {
    const before = upstream.uploads.length
    const { bytes } = wheel('fw-evil', '1.0')
    const starred = twineParts('good', '1.0', { filename: 'good-1.0-py3-none-any.whl', bytes })
    starred[starred.length - 1].disposition += `; filename*=UTF-8''fw_evil-1.0-py3-none-any.whl`
    expect((await (await upload(starred)).json()) as object).toMatchObject({ code: 'upload_name_mismatch' })
    const twice = [...twineParts('fw-evil', '1.0', wheel('fw-evil', '1.0')), { name: 'name', value: 'good' }]
    const response = await upload(twice)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ code: 'upload_ambiguous', declared: 'name' })
    expect(upstream.uploads.length).toBe(before)
  })

  it('forwards a matching upload (PEP 503 name, PEP 440 version) as judged; package.published file is the request path', async () => {
    const response = await upload(twineParts('FW.Good', '1.0.0', wheel('fw-good', '1.0')))
    expect(response.status).toBe(200)
    expect(upstream.uploads.at(-1)).toMatchObject({
      filename: 'fw_good-1.0-py3-none-any.whl',
      fields: { ':action': 'file_upload', name: 'FW.Good', version: '1.0.0', filetype: 'bdist_wheel' },
    })
    const [event] = (await proxy.events('package.published')).filter((e) => e.data.packageName === 'FW.Good')
    // Spec 6.5: `file` is the upload request path (below the firewall prefix, as Maven's).
    expect(event.data).toMatchObject({ ecosystem: 'pypi', version: '1.0.0', upstream: 'internal-py', file: 'legacy/' })
    const sdist = await upload([
      ...twineParts('fw-good', '2.0', { filename: 'fw-good-2.0.tar.gz', bytes: Buffer.from('sdist') }).slice(0, -1),
      { name: 'content', value: Buffer.from('sdist'), disposition: '; filename="fw-good-2.0.tar.gz"' },
    ])
    expect(sdist.status).toBe(200)
    expect(upstream.uploads.at(-1)).toMatchObject({ filename: 'fw-good-2.0.tar.gz' })
  })
})
