import { createHash } from 'node:crypto'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startMavenUpstream, type MavenUpstream } from '../support/maven-upstream'

/** The firewall URL the documented Maven and Gradle snippets name; tests replace only this. */
export const DOCUMENTED_JVM_URL = 'http://localhost:3000/registry/default/jvm/'

const sha1 = (bytes: Buffer) => createHash('sha1').update(bytes).digest('hex')

/** A POM of `g:a:v` depending on `deps` (`g:a:v` each). */
export const pom = (g: string, a: string, v: string, deps: string[] = [], packaging = 'jar', extra = '') =>
  `<project><modelVersion>4.0.0</modelVersion><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version><packaging>${packaging}</packaging>${extra}<dependencies>${deps
    .map((d) => {
      const [dg, da, dv] = d.split(':')
      return `<dependency><groupId>${dg}</groupId><artifactId>${da}</artifactId><version>${dv}</version></dependency>`
    })
    .join('')}</dependencies></project>`

/** A loopback Maven repository behind a firewall `jvm` that bans `org.evil:*` downloads and `org.reserved:*` uploads. */
export interface JvmFirewall {
  upstream: MavenUpstream
  proxy: ProxyHarness
  /** The owner's token, as FIREWALL_TOKEN in the documented settings. */
  token: string
  /** Puts a POM and a jar (each with its `.sha1`, or `jarChecksum` for the jar) into the upstream. */
  seedArtifact(g: string, a: string, v: string, deps?: string[], jarChecksum?: string): void
  close(): Promise<void>
}

export async function startJvmFirewall(): Promise<JvmFirewall> {
  const upstream = await startMavenUpstream({ password: 'deployer-secret' })
  const seed = (path: string, content: string, checksum?: string) => {
    const bytes = Buffer.from(content)
    const modified = new Date('2020-01-01T00:00:00Z')
    upstream.files.set(path, { bytes, modified })
    upstream.files.set(`${path}.sha1`, { bytes: Buffer.from(checksum ?? sha1(bytes)), modified })
  }
  const proxy = await startProxy()
  await proxy.putFirewall('jvm', {
    ecosystem: 'maven',
    upstreams: [
      {
        id: 'repo',
        endpoint: upstream.url,
        credentials: { username: 'deployer', password: 'deployer-secret' },
        internal: true,
      },
    ],
    rules: [
      {
        id: 'no-evil',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['org.evil:*'] } },
        description: 'org.evil is banned',
      },
      {
        id: 'reserved',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['org.reserved:*'] } },
        description: 'org.reserved is reserved',
      },
    ],
  })
  return {
    upstream,
    proxy,
    token: await proxy.token('owner'),
    seedArtifact(g, a, v, deps = [], jarChecksum) {
      const dir = `${g.replaceAll('.', '/')}/${a}/${v}`
      seed(`${dir}/${a}-${v}.pom`, pom(g, a, v, deps))
      seed(`${dir}/${a}-${v}.jar`, `jar of ${g}:${a}:${v}`, jarChecksum)
    },
    async close() {
      await proxy.close()
      await upstream.close()
    },
  }
}
