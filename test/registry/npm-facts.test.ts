import { describe, expect, it } from 'vitest'
import { factsFromManifest, licenseExpressionOf, parseTarballPath } from '../../server/registry/npm/packument'

describe('licenseExpressionOf', () => {
  it('reads a license string', () => {
    expect(licenseExpressionOf({ license: 'MIT' })).toBe('MIT')
  })

  it('reads a legacy license object', () => {
    expect(licenseExpressionOf({ license: { type: 'ISC', url: 'x' } })).toBe('ISC')
  })

  it('joins a legacy licenses array with OR', () => {
    expect(licenseExpressionOf({ licenses: [{ type: 'MIT' }, { type: 'Apache-2.0' }] })).toBe('MIT OR Apache-2.0')
  })

  it('parenthesizes compound entries of a licenses array', () => {
    expect(licenseExpressionOf({ licenses: ['MIT AND ISC', 'BSD-3-Clause'] })).toBe('(MIT AND ISC) OR BSD-3-Clause')
  })

  it('returns undefined without a license', () => {
    expect(licenseExpressionOf({})).toBeUndefined()
  })
})

describe('factsFromManifest', () => {
  const packument = { time: { created: '2020-01-01T00:00:00Z', '1.0.0': '2024-05-01T00:00:00.000Z' } }

  it('takes the publish time from the packument', () => {
    expect(factsFromManifest('pkg', '1.0.0', {}, packument).published).toBe('2024-05-01T00:00:00.000Z')
  })

  it('collects license, deprecation, scripts and the install-script flag', () => {
    const manifest = {
      license: 'MIT',
      deprecated: 'use other',
      scripts: { install: 'node-gyp rebuild', n: 3 },
      hasInstallScript: true,
    }
    expect(factsFromManifest('pkg', '1.0.0', manifest, packument)).toEqual({
      ecosystem: 'npm',
      packageName: 'pkg',
      version: '1.0.0',
      published: '2024-05-01T00:00:00.000Z',
      license: 'MIT',
      deprecated: 'use other',
      scripts: { install: 'node-gyp rebuild' },
      hasInstallScript: true,
    })
  })

  it('leaves published unset when the packument has no time for the version', () => {
    expect(factsFromManifest('pkg', '2.0.0', {}, packument)).toEqual({
      ecosystem: 'npm',
      packageName: 'pkg',
      version: '2.0.0',
    })
  })
})

describe('parseTarballPath', () => {
  it('parses an unscoped tarball path', () => {
    expect(parseTarballPath('/lodash/-/lodash-4.17.21.tgz')).toEqual({
      name: 'lodash',
      version: '4.17.21',
      file: 'lodash-4.17.21.tgz',
    })
  })

  it('parses a scoped tarball path', () => {
    expect(parseTarballPath('/@acme/ui/-/ui-1.2.3.tgz')).toEqual({
      name: '@acme/ui',
      version: '1.2.3',
      file: 'ui-1.2.3.tgz',
    })
  })

  it('parses an encoded scope separator', () => {
    expect(parseTarballPath('/@acme%2fui/-/ui-1.2.3.tgz')?.name).toBe('@acme/ui')
  })

  it('parses an upper-case encoded scope separator', () => {
    expect(parseTarballPath('@acme%2Fui/-/ui-1.2.3.tgz')?.name).toBe('@acme/ui')
  })

  it('accepts a scoped file name', () => {
    expect(parseTarballPath('/@acme/ui/-/@acme/ui-1.2.3.tgz')?.version).toBe('1.2.3')
  })

  it('keeps prerelease and build parts of the version', () => {
    expect(parseTarballPath('/pkg/-/pkg-1.0.0-rc.1+build.5.tgz')?.version).toBe('1.0.0-rc.1+build.5')
  })

  it('handles names containing dashes', () => {
    expect(parseTarballPath('/left-pad/-/left-pad-1.3.0.tgz')).toMatchObject({ name: 'left-pad', version: '1.3.0' })
  })

  it('ignores a query string', () => {
    expect(parseTarballPath('/pkg/-/pkg-1.0.0.tgz?token=x')?.version).toBe('1.0.0')
  })

  it('rejects a file of another package', () => {
    expect(parseTarballPath('/pkg/-/other-1.0.0.tgz')).toBeNull()
  })

  it('rejects a packument path', () => {
    expect(parseTarballPath('/pkg')).toBeNull()
  })

  it('rejects a malformed escape', () => {
    expect(parseTarballPath('/pkg/-/pkg-%E0.tgz')).toBeNull()
  })
})
