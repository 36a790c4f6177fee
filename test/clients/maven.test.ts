import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProxyHarness } from '../registry/harness'
import type { MavenUpstream } from '../support/maven-upstream'
import { DOCUMENTED_JVM_URL, pom, startJvmFirewall, type JvmFirewall } from './jvm-firewall'
import { documentedSnippet, runClient } from './run'
import { QUICK_JVM_OPTS } from '../support/jvm'

// Real `mvn` (3.8.7) with the README's settings.xml, unchanged but for the URL, through a
// firewall whose upstream is a loopback repository. The local repository starts as Debian's
// /usr/share/maven-repo (what a fresh machine has after .ci/run: Maven Central is out of reach, so
// the build uses no plugin but the super-POM's defaults, which Debian packages), fresh per file, so
// every fixture is downloaded through the firewall.
const DOCUMENTED_URL = DOCUMENTED_JVM_URL

let jvm: JvmFirewall
let upstream: MavenUpstream
let proxy: ProxyHarness
let token: string
let settings: string
/** One local repository for the file: plugins are downloaded once, fixtures once each. */
let localRepo: string

/** Debian's system Maven repository (maven, libmaven-*-plugin-java). */
const DEBIAN_MAVEN_REPO = '/usr/share/maven-repo'

/** `mvn` in a project holding `pomXml` and the documented settings (`-s settings.xml`). */
async function mvn(pomXml: string, args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'pf-mvn-project-'))
  writeFileSync(join(dir, 'pom.xml'), pomXml)
  writeFileSync(join(dir, 'settings.xml'), settings)
  return runClient('mvn', ['-B', '-s', 'settings.xml', `-Dmaven.repo.local=${localRepo}`, ...args], {
    cwd: dir,
    // An empty HOME: nothing of this machine's ~/.m2 counts.
    env: { FIREWALL_TOKEN: token, HOME: dir, MAVEN_OPTS: QUICK_JVM_OPTS },
  })
}

/** `mvn compile` of a source-less project depending on `deps`: resolves them, compile scope. */
const mvnResolve = (deps: string[], extra: string[] = []) =>
  mvn(pom('org.consumer', 'consumer', '1.0', deps), [...extra, 'compile'])

beforeAll(async () => {
  jvm = await startJvmFirewall()
  ;({ upstream, proxy, token } = jvm)
  jvm.seedArtifact('org.acme', 'app', '1.0', ['org.acme:lib:1.0'])
  jvm.seedArtifact('org.acme', 'lib', '1.0')
  jvm.seedArtifact('org.evil', 'payload', '1.0')
  jvm.seedArtifact('org.acme', 'tampered', '1.0', [], '0'.repeat(40))
  settings = documentedSnippet('README.md', '**Maven**', 'xml').replace(DOCUMENTED_URL, proxy.registryUrl('jvm'))
  localRepo = join(mkdtempSync(join(tmpdir(), 'pf-m2-')), 'repository')
  // Debian's Maven repository (the maven package and .ci/run's libmaven-*-plugin-java: the
  // super-POM's default plugins), linked file by file: Maven only adds files next to them.
  await runClient('cp', ['-rs', DEBIAN_MAVEN_REPO, localRepo], { cwd: tmpdir() })
}, 60_000)

afterAll(async () => {
  await jvm?.close()
})

describe('mvn through a firewall with the README settings.xml', () => {
  it('the documented settings are used unchanged (only the URL differs)', () => {
    expect(settings).toContain('<password>${env.FIREWALL_TOKEN}</password>')
    expect(settings).toContain(proxy.registryUrl('jvm'))
  })

  it('resolves a dependency and its transitive dependency (answers the Basic challenge)', async () => {
    const run = await mvnResolve(['org.acme:app:1.0'], ['-C'])
    expect(run.output).toContain('BUILD SUCCESS')
    expect(run.output).toContain(`Downloaded from firewall: ${proxy.registryUrl('jvm')}org/acme/app/1.0/app-1.0.jar`)
    expect(run.output).toContain(`Downloaded from firewall: ${proxy.registryUrl('jvm')}org/acme/lib/1.0/lib-1.0.jar`)
    expect(existsSync(join(localRepo, 'org/acme/lib/1.0/lib-1.0.jar'))).toBe(true)
  }, 240_000)

  it('a blocked dependency fails the build with the rule, the request id and the exception link', async () => {
    const run = await mvnResolve(['org.evil:payload:1.0'])
    const url = proxy.registryUrl('jvm')
    expect(run.code).not.toBe(0)
    expect(run.output).toMatch(
      new RegExp(
        escape(
          `Could not transfer artifact org.evil:payload:pom:1.0 from/to firewall (${url}): authorization failed for ${url}org/evil/payload/1.0/payload-1.0.pom, status: 403 ` +
            'org.evil:payload@1.0 is blocked by firewall jvm rule no-evil: org.evil is banned [package name matches org.evil:*]. Request id: ',
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/jvm/exception-requests/new?request=`,
          ) +
          '\\1',
      ),
    )
  }, 240_000)

  it('strict checksums (-C): the checksums pass through unchanged, a mismatching file fails the build', async () => {
    const run = await mvnResolve(['org.acme:tampered:1.0'], ['-C'])
    expect(run.code).not.toBe(0)
    expect(run.output).toContain(
      `Could not transfer artifact org.acme:tampered:jar:1.0 from/to firewall (${proxy.registryUrl('jvm')}): Checksum validation failed, expected ${'0'.repeat(40)} but is`,
    )
  }, 240_000)

  it('mvn deploy publishes to the internal upstream (distributionManagement id = the settings server id)', async () => {
    const distribution = `<distributionManagement><repository><id>firewall</id><url>${proxy.registryUrl('jvm')}</url></repository></distributionManagement>`
    const build = distribution
    const run = await mvn(pom('org.acme', 'published', '1.0', [], 'pom', build), ['deploy'])
    expect(run.output).toContain('BUILD SUCCESS')
    expect(upstream.puts).toContain('org/acme/published/1.0/published-1.0.pom')
    const blocked = await mvn(pom('org.reserved', 'name', '1.0', [], 'pom', build), ['deploy'])
    expect(blocked.code).not.toBe(0)
    expect(blocked.output).toContain(
      `Could not transfer artifact org.reserved:name:pom:1.0 from/to firewall (${proxy.registryUrl('jvm')}): authorization failed for ${proxy.registryUrl('jvm')}org/reserved/name/1.0/name-1.0.pom, status: 403 org.reserved:name@1.0 is blocked by firewall jvm rule reserved: org.reserved is reserved [package name matches org.reserved:*]. Request id: req-`,
    )
    expect(upstream.puts.some((path) => path.startsWith('org/reserved/'))).toBe(false)
  }, 240_000)
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
