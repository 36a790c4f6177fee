import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createAdvisoryIndex } from '../../server/advisories/index-build'
import { isVersionAffected } from '../../server/advisories/affected'
import { parseOsvRecord } from '../../server/advisories/osv'
import { PackedIndexBuilder } from '../../server/advisories/packed-index'
import type { Advisory, AdvisoryIndex, AffectedPackage } from '../../server/advisories/types'
import type { Ecosystem } from '../../server/firewall/schema'

const FIXTURES = join(__dirname, '..', 'fixtures', 'osv')

/** Every fixture record of one OSV ecosystem directory, parsed as the feed loader parses them. */
function load(dir: string) {
  const advisories: Advisory[] = []
  const withdrawn: string[] = []
  for (const name of readdirSync(join(FIXTURES, dir)).filter((n) => n.endsWith('.json'))) {
    const parsed = parseOsvRecord(JSON.parse(readFileSync(join(FIXTURES, dir, name), 'utf8')))
    if (parsed.kind === 'invalid') throw new Error(`${name}: ${parsed.error}`)
    if (parsed.kind === 'withdrawn') withdrawn.push(parsed.id)
    else advisories.push(parsed.advisory)
  }
  // The feed's packed index and the object index (ADVISORY_DIR) must answer alike.
  const packed = new PackedIndexBuilder()
  for (const advisory of advisories) packed.add(advisory)
  return { index: packed.finish(), plain: createAdvisoryIndex(advisories), withdrawn }
}

function fixtureAdvisory(dir: string, id: string): Advisory {
  const parsed = parseOsvRecord(JSON.parse(readFileSync(join(FIXTURES, dir, `${id}.json`), 'utf8')))
  if (parsed.kind !== 'advisory') throw new Error(id)
  return parsed.advisory
}

const feeds = { npm: load('npm'), pypi: load('PyPI'), maven: load('Maven'), nuget: load('NuGet') }

function ids(ecosystem: Ecosystem, name: string, version: string): string[] {
  const found = (index: AdvisoryIndex) => {
    const { vulnerabilities, malware } = index.lookup(ecosystem, name, version)
    return [...vulnerabilities, ...malware].map((a) => a.id).sort()
  }
  const packed = found(feeds[ecosystem].index)
  expect(found(feeds[ecosystem].plain)).toEqual(packed)
  return packed
}

describe('fixtures', () => {
  it('parse without an invalid record and report the withdrawn ones', () => {
    expect(feeds.npm.withdrawn.sort()).toEqual(['GHSA-8cf7-32gw-wr33', 'MAL-2022-4691'])
    expect(feeds.pypi.withdrawn.sort()).toEqual(['GHSA-m87m-mmvp-v9qm', 'PYSEC-2022-42992'])
    expect(feeds.maven.withdrawn.sort()).toEqual(['GHSA-c27h-mcmw-48hv', 'MAL-2024-7766'])
    expect(feeds.nuget.withdrawn.sort()).toEqual(['GHSA-qj66-m88j-hmgj', 'MAL-2023-1190'])
    expect(Object.values(feeds).map((f) => f.index.size)).toEqual([29, 25, 22, 20])
  })

  it('keep one record per id in the packed index and count records per ecosystem', () => {
    const builder = new PackedIndexBuilder()
    const lodash = fixtureAdvisory('npm', 'GHSA-jf85-cpcp-j695')
    expect([builder.add(lodash), builder.add({ ...lodash, summary: 'again' })]).toEqual([true, false])
    const index = builder.finish()
    expect([index.size, index.count('npm'), index.count('pypi')]).toEqual([1, 1, 0])
    expect(index.lookup('npm', 'lodash', '4.17.11').vulnerabilities.map((a) => a.summary)).toEqual([lodash.summary])
  })
})

describe('npm (semver ranges)', () => {
  it('matches each lodash advisory whose range holds the version, and none past the last fix', () => {
    expect(ids('npm', 'lodash', '4.17.11')).toEqual([
      'GHSA-29mw-wpgm-hmr9',
      'GHSA-35jh-r3h4-6jhm',
      'GHSA-jf85-cpcp-j695',
      'GHSA-p6mc-m468-83gw',
    ])
    expect(ids('npm', 'lodash', '3.6.0')).toEqual(['GHSA-35jh-r3h4-6jhm', 'GHSA-4xc9-xhrj-v574', 'GHSA-jf85-cpcp-j695'])
    expect(ids('npm', 'lodash', '4.17.21')).toEqual([])
  })

  it('reads several affected entries of one package as separate ranges', () => {
    expect(ids('npm', 'minimist', '1.2.2')).toEqual(['GHSA-vh95-rmgr-6w4m', 'GHSA-xvch-5gv4-984h'])
    expect(ids('npm', 'minimist', '1.2.5')).toEqual(['GHSA-xvch-5gv4-984h'])
    expect(ids('npm', 'minimist', '0.2.4')).toEqual([])
    expect(ids('npm', 'ansi-regex', '5.0.0')).toEqual(['GHSA-93q8-gq69-wqmw'])
    expect(ids('npm', 'ansi-regex', '4.1.1')).toEqual([])
  })

  it('orders prereleases inside a range the way semver does', () => {
    expect(ids('npm', 'express', '5.0.0-beta.1')).toEqual(['GHSA-rv95-896h-c2vc'])
    expect(ids('npm', 'express', '5.0.0-beta.3')).toEqual([])
    expect(ids('npm', 'express', '4.19.1')).toEqual(['GHSA-rv95-896h-c2vc'])
    expect(ids('npm', 'express', '4.19.2')).toEqual([])
  })

  it('includes last_affected itself and nothing after it', () => {
    expect(ids('npm', 'request', '2.88.2')).toEqual(['GHSA-p8p7-x288-28g6'])
    expect(ids('npm', 'request', '2.88.3')).toEqual([])
    expect(ids('npm', 'vm2', '3.9.19')).toEqual(['GHSA-cchq-frgv-rjh5'])
  })

  it('matches exactly the compromised releases', () => {
    const versions = ['0.7.28', '0.7.29', '0.7.30', '0.8.0', '1.0.0', '1.0.1']
    expect(versions.map((v) => ids('npm', 'ua-parser-js', v).length)).toEqual([0, 1, 0, 1, 1, 0])
  })

  it('ignores withdrawn records', () => {
    expect(ids('npm', 'jsonwebtoken', '8.5.1')).toEqual([])
    expect(ids('npm', 'colors-helper-utils', '1.0.0')).toEqual([])
  })

  it('reports MAL records as malware: listed versions, or every version', () => {
    expect(feeds.npm.index.lookup('npm', 'flatmap-stream', '0.1.1').malware.map((a) => a.id)).toEqual(['MAL-2022-1142'])
    expect(ids('npm', 'flatmap-stream', '0.1.0')).toEqual([])
    expect(feeds.npm.index.lookup('npm', 'eslint-scope-util', '9.9.9').malware.map((a) => a.id)).toEqual([
      'MAL-2023-462',
    ])
    expect(ids('npm', '@typescript_eslinter/eslint', '0.0.2')).toEqual(['MAL-2024-5371'])
  })
})

describe('PyPI (PEP 440 ordering)', () => {
  it('matches several ranges of one record and the versions list beyond them', () => {
    expect(ids('pypi', 'django', '4.2.2')).toEqual(['GHSA-vm8q-m57g-pff3', 'PYSEC-2023-100'])
    expect(ids('pypi', 'django', '4.1.9')).toEqual(['PYSEC-2023-100'])
    expect(ids('pypi', 'django', '4.2.11')).toEqual([])
    // 4.2rc1 sorts before 4.2, outside [4.2, 4.2.3), but the record lists it.
    expect(ids('pypi', 'django', '4.2rc1')).toEqual(['PYSEC-2023-100'])
  })

  it('compares pre, post and dev releases and normalizes names (PEP 503)', () => {
    expect(ids('pypi', 'PyYAML', '5.4b2')).toEqual(['PYSEC-2021-142'])
    expect(ids('pypi', 'pyyaml', '5.4')).toEqual([])
    expect(ids('pypi', 'tqdm', '4.66.3.dev0')).toEqual(['GHSA-g7vv-2v7x-gj9p'])
    expect(ids('pypi', 'tqdm', '4.66.2.post1')).toEqual(['GHSA-g7vv-2v7x-gj9p'])
    expect(ids('pypi', 'tqdm', '4.66.3.post1')).toEqual([])
    expect(ids('pypi', 'Flask_Cors', '4.0.0')).toEqual(['GHSA-84pr-m4jr-85g5'])
  })

  it('reads calendar versions with leading zeros as the same numbers', () => {
    expect(ids('pypi', 'certifi', '2015.4.28')).toEqual(['GHSA-xqr8-7jwr-rhp7'])
    expect(ids('pypi', 'certifi', '2022.12.7')).toEqual(['GHSA-xqr8-7jwr-rhp7'])
    expect(ids('pypi', 'certifi', '2023.07.22')).toEqual([])
  })

  it('covers several advisories of one package with different lower bounds', () => {
    expect(ids('pypi', 'requests', '2.30.0')).toEqual(['GHSA-9wx4-h78v-vm56', 'PYSEC-2023-74'])
    expect(ids('pypi', 'requests', '2.2.1')).toEqual(['GHSA-9wx4-h78v-vm56'])
    expect(ids('pypi', 'urllib3', '1.26.4')).toEqual(['GHSA-g4mx-q9vg-27p4', 'GHSA-v845-jxx5-vc9f', 'PYSEC-2021-108'])
    expect(ids('pypi', 'urllib3', '2.0.6')).toEqual(['GHSA-g4mx-q9vg-27p4'])
  })

  it('ignores withdrawn records and reports malware', () => {
    expect(ids('pypi', 'numpy', '1.21.0')).toEqual([])
    expect(feeds.pypi.index.lookup('pypi', 'ctx', '0.2.6').malware.map((a) => a.id)).toEqual(['MAL-2022-1'])
    expect(ids('pypi', 'ctx', '0.2.5')).toEqual([])
    expect(ids('pypi', 'py-cord-selfbot', '1.0')).toEqual(['MAL-2024-9011'])
  })
})

describe('Maven (ComparableVersion ordering)', () => {
  const log4j = 'org.apache.logging.log4j:log4j-core'

  it('places betas, alphas and releases of log4j-core in their ranges', () => {
    expect(ids('maven', log4j, '2.14.1')).toEqual([
      'GHSA-7rjr-3q55-vv33',
      'GHSA-8489-44mv-ggj8',
      'GHSA-jfh8-c2jp-5v3q',
      'GHSA-p6xc-xr62-6r2g',
    ])
    expect(ids('maven', log4j, '2.15.0')).toEqual(['GHSA-7rjr-3q55-vv33', 'GHSA-8489-44mv-ggj8', 'GHSA-p6xc-xr62-6r2g'])
    expect(ids('maven', log4j, '2.0-beta9')).toEqual([
      'GHSA-7rjr-3q55-vv33',
      'GHSA-8489-44mv-ggj8',
      'GHSA-jfh8-c2jp-5v3q',
      'GHSA-p6xc-xr62-6r2g',
    ])
    expect(ids('maven', log4j, '2.0-beta8')).toEqual(['GHSA-8489-44mv-ggj8', 'GHSA-p6xc-xr62-6r2g'])
    expect(ids('maven', log4j, '2.12.2')).toEqual(['GHSA-8489-44mv-ggj8', 'GHSA-p6xc-xr62-6r2g'])
    expect(ids('maven', log4j, '2.17.1')).toEqual([])
  })

  it('treats .RELEASE and .Final as the plain release, and orders qualifiers and milestones', () => {
    expect(ids('maven', 'org.springframework:spring-beans', '5.2.19.RELEASE')).toEqual(['GHSA-36p3-wjmg-h94x'])
    expect(ids('maven', 'org.springframework:spring-beans', '5.2.20')).toEqual([])
    expect(ids('maven', 'org.springframework:spring-beans', '5.3.17')).toEqual(['GHSA-36p3-wjmg-h94x'])
    expect(ids('maven', 'io.netty:netty-codec-http2', '4.1.99.Final')).toEqual(['GHSA-xpw8-rcwv-8f8p'])
    expect(ids('maven', 'io.netty:netty-codec-http2', '4.1.100.Final')).toEqual([])
    expect(ids('maven', 'com.google.guava:guava', '31.1-jre')).toEqual(['GHSA-269g-pwp5-87pp', 'GHSA-7g45-4rm6-3mm3'])
    expect(ids('maven', 'com.google.guava:guava', '32.0.1-jre')).toEqual([])
    expect(ids('maven', 'org.apache.tomcat.embed:tomcat-embed-core', '11.0.0-M26')).toEqual(['GHSA-5j33-cvvr-w245'])
    expect(ids('maven', 'org.apache.tomcat.embed:tomcat-embed-core', '10.1.34')).toEqual([])
  })

  it('reads four-part versions, last_affected and withdrawn records', () => {
    expect(ids('maven', 'com.fasterxml.jackson.core:jackson-databind', '2.12.6')).toEqual(['GHSA-57j2-w4cx-62h2'])
    expect(ids('maven', 'com.fasterxml.jackson.core:jackson-databind', '2.13.2.1')).toEqual([])
    expect(ids('maven', 'com.fasterxml.jackson.core:jackson-databind', '2.15.2')).toEqual([])
    expect(ids('maven', 'log4j:log4j', '1.2.17')).toEqual(['GHSA-2qrg-x229-3v8q'])
    expect(ids('maven', 'log4j:log4j', '1.1.3')).toEqual([])
  })

  it('keeps Maven coordinates case-sensitive and reports malware', () => {
    expect(ids('maven', 'Org.Yaml:SnakeYaml', '1.30')).toEqual([])
    expect(ids('maven', 'org.yaml:snakeyaml', '1.30')).toEqual(['GHSA-3mc7-4q67-w48m', 'GHSA-mjmj-j48q-9wg2'])
    const scalaz = feeds.maven.index.lookup('maven', 'io.github.leetcrunch:scalaz-core', '7.2.35')
    expect(scalaz.malware.map((a) => a.id)).toEqual(['MAL-2024-4330'])
  })
})

describe('NuGet (NuGet SemVer ordering)', () => {
  it('matches ids case-insensitively and excludes the fixed version', () => {
    expect(ids('nuget', 'newtonsoft.json', '12.0.3')).toEqual(['GHSA-5crp-9r3c-p9vr'])
    expect(ids('nuget', 'Newtonsoft.Json', '13.0.1')).toEqual([])
  })

  it('walks several ranges, prerelease labels and four-part versions', () => {
    expect(ids('nuget', 'Microsoft.Data.SqlClient', '5.1.2')).toEqual(['GHSA-98g6-xh36-x2p7'])
    expect(ids('nuget', 'Microsoft.Data.SqlClient', '5.2.0')).toEqual([])
    expect(ids('nuget', 'System.Text.Encodings.Web', '4.7.0')).toEqual([])
    expect(ids('nuget', 'System.Text.Encodings.Web', '5.0.0')).toEqual(['GHSA-ghhp-997w-qr28'])
    expect(ids('nuget', 'Microsoft.AspNetCore.Identity', '7.0.0-preview.3')).toEqual(['GHSA-447w-4pp5-hhc4'])
    expect(ids('nuget', 'Microsoft.AspNetCore.Identity', '6.0.20')).toEqual([])
    expect(ids('nuget', 'Microsoft.Windows.SDK.Contracts', '10.0.19041.1')).toEqual(['GHSA-6qmf-mmc7-6c2p'])
  })

  it('reads last_affected, withdrawn and malware records', () => {
    expect(ids('nuget', 'Portable.BouncyCastle', '1.9.0')).toEqual(['GHSA-8xfc-gm6g-vgpv'])
    expect(ids('nuget', 'System.Formats.Asn1', '8.0.0')).toEqual([])
    expect(feeds.nuget.index.lookup('nuget', 'coinbase.core', '1.1.0').malware.map((a) => a.id)).toEqual([
      'MAL-2023-1180',
    ])
    expect(ids('nuget', 'Coinbase.Core', '2.0.0')).toEqual([])
  })
})

describe('range events', () => {
  type Events = AffectedPackage['ranges'][number]['events']
  const range = (type: 'SEMVER' | 'ECOSYSTEM', ecosystem: string, events: Events): AffectedPackage => ({
    ecosystem,
    name: 'p',
    versions: [],
    ranges: [{ type, events }],
  })

  it('stops at a limit: nothing at or past it is in the range', () => {
    const limited = range('ECOSYSTEM', 'PyPI', [{ introduced: '1.0' }, { limit: '2.0' }])
    expect(['0.9', '1.0', '1.9.9', '2.0', '3.0'].map((v) => isVersionAffected(limited, v))).toEqual([
      false,
      true,
      true,
      false,
      false,
    ])
  })

  it('reads limit "*" as no limit', () => {
    expect(isVersionAffected(range('SEMVER', 'npm', [{ introduced: '1.0.0' }, { limit: '*' }]), '9.0.0')).toBe(true)
  })

  it('compares SEMVER ranges of another ecosystem as semver', () => {
    const semverRange = range('SEMVER', 'NuGet', [{ introduced: '1.0.0' }, { fixed: '1.2.0' }])
    expect([isVersionAffected(semverRange, '1.1.0'), isVersionAffected(semverRange, '1.2.0')]).toEqual([true, false])
  })

  it('never places a version the ordering cannot read in a range', () => {
    expect(isVersionAffected(range('ECOSYSTEM', 'PyPI', [{ introduced: '0' }]), 'not a version')).toBe(false)
  })
})
