import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProxyHarness } from '../registry/harness'
import { DOCUMENTED_JVM_URL, startJvmFirewall, type JvmFirewall } from './jvm-firewall'
import { documentedSnippet, runClient, type ClientRun } from './run'
import { QUICK_JVM_OPTS } from '../support/jvm'

// Real `gradle` (Debian's 4.4.1) with the repository block of docs/clients.md, unchanged but for
// the URL, resolving through a firewall whose upstream is a loopback repository. The build applies
// no plugin and the Gradle user home is fresh, so nothing comes from ~/.gradle or a plugin portal.
// Publishing is not tested: Debian's Gradle 4.4.1 cannot publish over HTTP, with maven-publish or
// the old maven plugin's uploadArchives ("Cannot access ... using the available connector
// factories: BasicRepositoryConnectorFactory"), before any request.
const DOCUMENTED_URL = DOCUMENTED_JVM_URL

let jvm: JvmFirewall
let proxy: ProxyHarness
let token: string
let repository: string
/** One Gradle user home for the file (its cache), fresh: every fixture comes through the firewall. */
let gradleHome: string

/**
 * One `gradle --continue` run for the file (a JVM start costs ~20 s here): `resolve` takes a
 * dependency with a transitive one, `resolveBlocked` a blocked one.
 */
async function gradleRun() {
  const dir = mkdtempSync(join(tmpdir(), 'pf-gradle-project-'))
  writeFileSync(
    join(dir, 'build.gradle'),
    `repositories {
${repository}}
configurations { deps; blocked }
dependencies {
  deps 'org.acme:app:1.0'
  blocked 'org.evil:payload:1.0'
}
task resolve { doLast { configurations.deps.files.each { println "resolved \${it.name}" } } }
task resolveBlocked { doLast { configurations.blocked.files.each { println "resolved \${it.name}" } } }
`,
  )
  return runClient(
    'gradle',
    ['--no-daemon', '--console=plain', '--gradle-user-home', gradleHome, '--continue', 'resolve', 'resolveBlocked'],
    // An empty HOME: nothing of this machine's ~/.gradle or ~/.m2 counts.
    { cwd: dir, env: { FIREWALL_TOKEN: token, HOME: dir, GRADLE_OPTS: QUICK_JVM_OPTS } },
  )
}

beforeAll(async () => {
  jvm = await startJvmFirewall()
  ;({ proxy, token } = jvm)
  jvm.seedArtifact('org.acme', 'app', '1.0', ['org.acme:lib:1.0'])
  jvm.seedArtifact('org.acme', 'lib', '1.0')
  jvm.seedArtifact('org.evil', 'payload', '1.0')
  repository = documentedSnippet('docs/clients.md', '### Gradle', 'groovy').replace(
    DOCUMENTED_URL,
    proxy.registryUrl('jvm'),
  )
  gradleHome = mkdtempSync(join(tmpdir(), 'pf-gradle-home-'))
}, 60_000)

afterAll(async () => {
  await jvm?.close()
})

describe('gradle through a firewall with the documented repository block', () => {
  let run: Promise<ClientRun>
  beforeAll(() => {
    run = gradleRun()
  })

  it('resolves a dependency with its transitive dependency (answers the Basic challenge)', async () => {
    expect(repository).toContain(`url = '${proxy.registryUrl('jvm')}'`)
    const { output } = await run
    expect(output).toContain(`Download ${proxy.registryUrl('jvm')}org/acme/lib/1.0/lib-1.0.jar`)
    expect(output).toContain('resolved app-1.0.jar')
    expect(output).toContain('resolved lib-1.0.jar')
  }, 240_000)

  it('a blocked dependency prints the rule, the request id and the exception link', async () => {
    const { code, output } = await run
    const url = `${proxy.registryUrl('jvm')}org/evil/payload/1.0/payload-1.0.pom`
    expect(code).not.toBe(0)
    expect(output).toMatch(
      new RegExp(
        escape(
          `> Could not GET '${url}'. Received status code 403 from server: org.evil:payload@1.0 is blocked by firewall jvm rule no-evil: org.evil is banned [package name matches org.evil:*]. Request id: `,
        ) +
          '(req-[0-9a-z]+)' +
          escape(
            `. Request an exception: ${proxy.origin}/namespaces/acme/firewalls/jvm/exception-requests/new?request=`,
          ) +
          '\\1',
      ),
    )
  }, 240_000)
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
