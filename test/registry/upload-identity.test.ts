import { describe, expect, it } from 'vitest'
import { checkDistributionFile, parseDistributionFile } from '../../server/registry/pypi/distribution-file'
import { checkPublishIdentity } from '../../server/registry/npm/publish-identity'
import { checkDeployPath } from '../../server/registry/maven/deploy-identity'
import { pushedPackageIdentity } from '../../server/registry/nuget/package-identity'
import { encodeMultipart } from '../../server/registry/multipart-encode'
import { parseMultipart } from '../../server/registry/multipart'
import { UploadRefused } from '../../server/registry/upload-refusal'
import { xmlFields } from '../../server/registry/xml-fields'
import { nupkg } from '../fixtures/ecosystems/packages'
import { zip } from '../fixtures/ecosystems/zip'

/** The refusal a call throws, or null when it does not throw one. */
function refusal(run: () => unknown): { code: string; declared: string; found: string } | null {
  try {
    run()
  } catch (error) {
    return refusalOf(error)
  }
  return null
}

function refusalOf(error: unknown): { code: string; declared: string; found: string } {
  if (error instanceof UploadRefused) return { code: error.code, declared: error.declared, found: error.found }
  throw error
}

/** The refusal an async call rejects with, or null when it resolves. */
const refusalAsync = (run: () => Promise<unknown>) => run().then(() => null, refusalOf)

describe('PyPI distribution file names', () => {
  it('parses wheels (with and without a build tag) and sdists (.tar.gz, .zip, dashes in the name)', () => {
    expect(parseDistributionFile('fw_evil-1.0-py3-none-any.whl')).toEqual({
      kind: 'wheel',
      name: 'fw_evil',
      version: '1.0',
    })
    expect(parseDistributionFile('pkg-2.0rc1-1-cp311-cp311-manylinux_2_17_x86_64.whl')).toMatchObject({
      version: '2.0rc1',
    })
    expect(parseDistributionFile('foo-bar-1.0.post1.tar.gz')).toEqual({
      kind: 'sdist',
      name: 'foo-bar',
      version: '1.0.post1',
    })
    expect(parseDistributionFile('Foo.Bar-1!2.0.zip')).toMatchObject({ name: 'Foo.Bar', version: '1!2.0' })
  })

  it('answers null for names that are neither (bad build tag, no version, eggs, extra fields)', () => {
    for (const name of [
      'pkg-1.0-x1-py3-none-any.whl',
      'pkg-1.0-py3-none.whl',
      'pkg-notaversion-py3-none-any.whl',
      'pkg.tar.gz',
      'pkg-1.0.egg',
      'pkg-1.0 .tar.gz',
      'pkg-1.0.tar.bz2',
    ])
      expect(parseDistributionFile(name), name).toBeNull()
  })

  it('accepts the form name and version in their PEP 503 / PEP 440 spellings', () => {
    expect(refusal(() => checkDistributionFile('FW.Good_pkg', '1.0.0', 'fw_good_pkg-1.0-py3-none-any.whl'))).toBeNull()
    expect(refusal(() => checkDistributionFile('fw-good', '1.0RC1', 'fw_good-1.0rc1-py3-none-any.whl'))).toBeNull()
  })

  it('refuses another name, another version, a path and an unparseable name, naming both values', () => {
    expect(refusal(() => checkDistributionFile('good', '1.0', 'fw_evil-1.0-py3-none-any.whl'))).toEqual({
      code: 'upload_name_mismatch',
      declared: 'good',
      found: 'fw_evil',
    })
    expect(refusal(() => checkDistributionFile('good', '1.0', 'good-1.0.1.tar.gz'))).toMatchObject({
      code: 'upload_version_mismatch',
      declared: '1.0',
      found: '1.0.1',
    })
    for (const name of ['../../good-1.0.tar.gz', 'dir\\good-1.0.tar.gz', '..', '', 'good-1.0.tar.gz\n'])
      expect(refusal(() => checkDistributionFile('good', '1.0', name))?.code, name).toBe('upload_file_name_invalid')
    expect(refusal(() => checkDistributionFile('good', '1.0', 'good-1.0.exe'))).toMatchObject({
      code: 'upload_file_name_invalid',
      found: 'good-1.0.exe',
    })
  })
})

describe('npm publish bodies', () => {
  const body = (name: string, key: string, version = key) => ({
    _id: name,
    name,
    versions: { [key]: { name, version, _id: `${name}@${version}` } },
    _attachments: { [`${name}-${version}.tgz`]: { data: '' } },
  })

  it('accepts what npm writes, scoped attachments with and without the scope, and provenance bundles', () => {
    expect(refusal(() => checkPublishIdentity('fw-ok', body('fw-ok', '1.0.0')))).toBeNull()
    const scoped = body('@acme/widget', '1.0.0')
    expect(refusal(() => checkPublishIdentity('@acme/widget', scoped))).toBeNull()
    scoped._attachments = { 'widget-1.0.0.tgz': { data: '' }, '@acme/widget-1.0.0.sigstore': { data: '' } }
    expect(refusal(() => checkPublishIdentity('@acme/widget', scoped))).toBeNull()
  })

  it('refuses a body, _id, manifest or attachment naming something else', () => {
    expect(refusal(() => checkPublishIdentity('good1', body('evil-x', '1.0.0')))).toEqual({
      code: 'upload_name_mismatch',
      declared: 'good1',
      found: 'evil-x',
    })
    expect(refusal(() => checkPublishIdentity('fw', body('fw', '1.0.0', '2.0.0')))).toEqual({
      code: 'upload_version_mismatch',
      declared: '1.0.0',
      found: '2.0.0',
    })
    expect(refusal(() => checkPublishIdentity('fw', { ...body('fw', '1.0.0'), name: undefined }))).toMatchObject({
      found: '(none)',
    })
    const renamed = body('fw', '1.0.0')
    renamed._attachments = { 'other-1.0.0.tgz': { data: '' } }
    expect(refusal(() => checkPublishIdentity('fw', renamed))).toMatchObject({
      code: 'upload_file_name_invalid',
      declared: 'fw-1.0.0.tgz',
      found: 'other-1.0.0.tgz',
    })
    const arrayVersions = { ...body('fw', '1.0.0'), versions: [{ name: 'fw', version: '1.0.0' }] }
    expect(refusal(() => checkPublishIdentity('fw', arrayVersions))?.code).toBe('upload_version_mismatch')
  })
})

describe('Maven deploy paths', () => {
  it('accepts layout paths: classifiers, extensions, companions, snapshots, metadata', () => {
    for (const path of [
      '/org/acme/lib/1.0/lib-1.0.jar',
      '/org/acme/lib/1.0/lib-1.0-sources.jar',
      '/org/acme/lib/1.0/lib-1.0.tar.gz.sha512',
      '/org/acme/lib/1.0/lib-1.0.pom.asc',
      '/org/acme/lib/1.0-SNAPSHOT/lib-1.0-20240101.120000-12-tests.jar',
      '/org/acme/my.lib/2.0.Final/my.lib-2.0.Final.jar',
      '/org/acme/lib/maven-metadata.xml.sha1',
      '/org/acme/my.lib/1.0-SNAPSHOT/maven-metadata.xml',
    ])
      expect(
        refusal(() => checkDeployPath(path)),
        path,
      ).toBeNull()
  })

  it('refuses files of another version or artifact, and paths with foreign characters or dot segments', () => {
    expect(refusal(() => checkDeployPath('/org/acme/lib/1.0/lib-2.0.jar'))).toEqual({
      code: 'upload_version_mismatch',
      declared: 'org.acme:lib:1.0',
      found: 'lib-2.0.jar',
    })
    expect(refusal(() => checkDeployPath('/org/acme/lib/1.0/lib-1.0'))?.code).toBe('upload_version_mismatch')
    expect(refusal(() => checkDeployPath('/org/acme/lib/1.0-SNAPSHOT/lib-1.0-2024-1.jar'))?.code).toBe(
      'upload_version_mismatch',
    )
    expect(refusal(() => checkDeployPath('/org/acme/lib/1.0/other-1.0.jar'))?.code).toBe('upload_name_mismatch')
    for (const path of [
      '/org/acme/lib/../lib/1.0/lib-1.0.jar',
      '/org/acme/lib/1.0/lib-1.0.jar%2F..%2F..%2Fx',
      '/org/acme/lib%20x/1.0/lib%20x-1.0.jar',
      '/org.acme/lib/1.0/lib-1.0.jar',
      '/org/acme/lib/1.0/lib-1.0.jar%00',
    ])
      expect(refusal(() => checkDeployPath(path))?.code, path).toBe('upload_file_name_invalid')
  })
})

describe('NuGet pushed packages', () => {
  const nuspec = (metadata: string, doctype = '') =>
    `<?xml version="1.0"?>${doctype}<package><metadata>${metadata}</metadata></package>`

  it('reads id, normalised version and license from the one root nuspec', async () => {
    expect(await pushedPackageIdentity(nupkg('Acme.Core', '1.0.0.0-Beta+sha'), 'package.nupkg')).toEqual({
      id: 'Acme.Core',
      version: '1.0.0-Beta',
      license: 'MIT',
    })
    // The manifest entry name is compared case-insensitively.
    const lower = zip({ 'acme.core.nuspec': nuspec('<id>Acme.Core</id><version>1.0</version>') })
    expect(await pushedPackageIdentity(lower, undefined)).toEqual({ id: 'Acme.Core', version: '1.0.0' })
  })

  it('refuses ambiguity (two manifests, two ids, a repeated entry) and a manifest named for another id', async () => {
    const two = zip({
      'A.nuspec': nuspec('<id>A</id><version>1.0</version>'),
      'B.nuspec': nuspec('<id>B</id><version>1.0</version>'),
    })
    expect((await refusalAsync(() => pushedPackageIdentity(two, undefined)))?.code).toBe('upload_ambiguous')
    const ids = zip({ 'A.nuspec': nuspec('<id>A</id><id>B</id><version>1.0</version>') })
    expect(await refusalAsync(() => pushedPackageIdentity(ids, undefined))).toEqual({
      code: 'upload_ambiguous',
      declared: 'A',
      found: 'B',
    })
    const named = zip({ 'Good.nuspec': nuspec('<id>Evil</id><version>1.0</version>') })
    expect(await refusalAsync(() => pushedPackageIdentity(named, undefined))).toEqual({
      code: 'upload_name_mismatch',
      declared: 'Evil',
      found: 'Good',
    })
  })

  it('refuses with a plain 400 what is no package: DOCTYPE entities, malformed XML, bad id or version, no zip', async () => {
    const cases = [
      zip({ 'A.nuspec': nuspec('<id>&x;</id><version>1.0</version>', '<!DOCTYPE package [<!ENTITY x "A">]>') }),
      zip({ 'A.nuspec': '<package><metadata><id>A</id>' }),
      zip({ 'A B.nuspec': nuspec('<id>A B</id><version>1.0</version>') }),
      zip({ 'A.nuspec': nuspec('<id>A</id><version>one</version>') }),
      zip({ 'lib/A.nuspec': nuspec('<id>A</id><version>1.0</version>') }),
      zip({
        'A.nuspec': nuspec(`<id>A</id><version>1.0</version><description>${'x'.repeat(1024 * 1024)}</description>`),
      }),
      Buffer.from('not a zip'),
    ]
    for (const bytes of cases) {
      let status = 0
      try {
        await pushedPackageIdentity(bytes, 'package.nupkg')
      } catch (error) {
        status = (error as { status: number }).status
        expect(error).not.toBeInstanceOf(UploadRefused)
      }
      expect(status).toBe(400)
    }
  })
})

describe('XML fields', () => {
  it('matches elements by local name, whatever their namespace prefix, as NuGet reads them', async () => {
    const xml = '<n:package xmlns:n="urn:x"><n:metadata><n:id n:a="1">A</n:id></n:metadata></n:package>'
    const field = (await xmlFields(xml, ['package/metadata/id']))?.get('package/metadata/id')?.[0]
    expect(field?.text).toBe('A')
    expect(field?.attributes.get('a')).toBe('1')
  })

  it('reads a 3 MB document in slices, letting other work run in between', async () => {
    const xml = `<package><metadata>${'<tag a="1">text</tag>'.repeat(150_000)}<id>A</id></metadata></package>`
    let turns = 0
    let reading = true
    const tick = () => {
      turns++
      if (reading) setImmediate(tick)
    }
    setImmediate(tick)
    const fields = await xmlFields(xml, ['package/metadata/id'])
    reading = false
    expect(fields?.get('package/metadata/id')?.map((f) => f.text)).toEqual(['A'])
    // One turn per 16 KiB slice at least: the event loop was never held for the whole document.
    expect(turns).toBeGreaterThan(xml.length / (16 * 1024) / 2)
  })

  it('refuses a document nested deeper than 64 elements (reading deep nesting costs the parser most)', async () => {
    const nested = (depth: number) =>
      `<package><metadata>${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</metadata></package>`
    expect(await xmlFields(nested(62), ['package/metadata/id'])).not.toBeNull()
    expect(await xmlFields(nested(63), ['package/metadata/id'])).toBeNull()
    expect(await xmlFields(nested(1_000_000), ['package/metadata/id'])).toBeNull()
  })
})

describe('multipart re-encoding', () => {
  it('round-trips through the parser: fields, repeated fields, binary file bytes, escaped names', async () => {
    const binary = Buffer.from([0, 13, 10, 45, 45, 255, 254])
    const parts = [
      { name: ':action', data: Buffer.from('file_upload') },
      { name: 'classifiers', data: Buffer.from('A :: B') },
      { name: 'classifiers', data: Buffer.from('C :: D\nwith a line') },
      { name: 'content', filename: 'pkg-1.0.tar.gz', contentType: 'application/gzip', data: binary },
      { name: 'odd"name\r\n', filename: 'a"b.txt', data: Buffer.from('x') },
    ]
    const { body, contentType } = encodeMultipart(parts)
    const parsed = await parseMultipart(body, contentType)
    expect(parsed?.map((p) => [p.name, p.filename, p.data.toString('hex')])).toEqual([
      [':action', undefined, Buffer.from('file_upload').toString('hex')],
      ['classifiers', undefined, Buffer.from('A :: B').toString('hex')],
      ['classifiers', undefined, Buffer.from('C :: D\nwith a line').toString('hex')],
      ['content', 'pkg-1.0.tar.gz', binary.toString('hex')],
      // Escaped as %22/%0D%0A in the header, and read back as written.
      ['odd"name\r\n', 'a"b.txt', Buffer.from('x').toString('hex')],
    ])
  })
})

describe('the refusal body', () => {
  it('is an RFC 9457 problem with a stable code, both values, and the error text npm prints', () => {
    const error = new UploadRefused(
      'upload_name_mismatch',
      'good',
      'fw-evil',
      'the file is for fw-evil, the form names good',
    )
    expect(error.status).toBe(400)
    expect(error.contentType).toBe('application/problem+json')
    expect(error.body()).toEqual({
      type: 'https://docs.package-firewall.dev/problems/upload-name-mismatch',
      title: 'Bad Request',
      status: 400,
      detail: 'the file is for fw-evil, the form names good',
      code: 'upload_name_mismatch',
      declared: 'good',
      found: 'fw-evil',
      error: 'the file is for fw-evil, the form names good',
    })
  })
})
