/**
 * Upload identity benchmark: the XML an upload brings (a maven-metadata.xml at the 16 MiB
 * deploy limit, nested as deep as it can be or listing 645,000 versions; a nuspec at the 1 MiB
 * manifest limit) read for the coordinates it names, while a timer measures how long the event
 * loop is held. Prints the read time, the event-loop delay p99 and max, and the peak RSS.
 *   npx tsx bench/upload-identity.bench.ts
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { checkMetadataCoordinates } from '../server/registry/maven/deploy-identity'
import { pushedPackageIdentity } from '../server/registry/nuget/package-identity'
import { zip } from '../test/fixtures/ecosystems/zip'

const MIB = 1024 * 1024
const path = { kind: 'metadata' as const, name: 'org.acme:lib', path: 'org/acme/lib/maven-metadata.xml' }
const head = '<metadata><groupId>org.acme</groupId><artifactId>lib</artifactId>'
const depth = Math.floor((16 * MIB - 200) / 7)
const nested = `${head}${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</metadata>`
const versions = Array.from({ length: Math.floor((16 * MIB) / 26) }, (_, i) => `<version>1.${i}</version>`).join('\n')
const listing = `${head}<versioning><versions>${versions}</versions></versioning></metadata>`
const nupkg = zip({
  'A.nuspec': `<package><metadata><id>A</id><version>1.0</version><description>${'x'.repeat(MIB - 300)}</description></metadata></package>`,
})
// The documents are built before the clock starts: only reading them is measured.
const cases: [string, () => Promise<unknown>][] = [
  [
    'maven-metadata.xml 16 MiB, nested (refused past 64 levels)',
    () => checkMetadataCoordinates(path, nested).catch(() => 'refused'),
  ],
  ['maven-metadata.xml 16 MiB, 645,000 versions', () => checkMetadataCoordinates(path, listing)],
  ['nuspec 1 MiB (the manifest limit)', () => pushedPackageIdentity(nupkg, 'package.nupkg')],
]

async function main(): Promise<void> {
  for (const [name, run] of cases) {
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    let peak = process.memoryUsage().rss
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5)
    histogram.enable()
    const started = performance.now()
    await run()
    const elapsed = performance.now() - started
    histogram.disable()
    clearInterval(sampler)
    const ms = (ns: number) => (ns / 1e6).toFixed(1)
    console.log(
      `${name}: read ${elapsed.toFixed(0)} ms, event-loop delay p99 ${ms(histogram.percentile(99))} ms, max ${ms(histogram.max)} ms, peak RSS ${(peak / MIB).toFixed(0)} MiB`,
    )
  }
}

void main()
