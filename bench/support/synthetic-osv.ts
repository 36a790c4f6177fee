import { strToU8, zipSync } from 'fflate'

// The synthetic OSV npm feed the advisory benchmarks serve.

/** One synthetic record: MAL- reports (listed versions or every version) and GHSA advisories with ranges. */
function record(i: number): Record<string, unknown> {
  const name = i % 7 === 0 ? `@scope-${i % 997}/pkg-${i}` : `pkg-${i}`
  if (i % 4 !== 0) {
    const affected =
      i % 3 === 0
        ? { package: { ecosystem: 'npm', name }, versions: [`1.0.${i % 10}`, `1.0.${(i % 10) + 1}`] }
        : { package: { ecosystem: 'npm', name }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }] }] }
    return {
      id: `MAL-2025-${i}`,
      modified: '2025-01-01T00:00:00Z',
      summary: `Malicious code in ${name} (npm)`,
      affected: [affected],
    }
  }
  return {
    id: `GHSA-bench-${i.toString(36).padStart(4, '0')}-${(i * 7919).toString(36).slice(-4)}`,
    modified: '2025-01-01T00:00:00Z',
    aliases: [`CVE-2025-${i}`],
    summary: `Prototype pollution in ${name}`,
    severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:N' }],
    affected: [
      {
        package: { ecosystem: 'npm', name },
        ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: `${1 + (i % 5)}.2.3` }] }],
      },
      {
        package: { ecosystem: 'npm', name },
        ranges: [{ type: 'SEMVER', events: [{ introduced: '3.0.0' }, { fixed: '3.4.1' }] }],
      },
    ],
    database_specific: { severity: 'HIGH' },
  }
}

/**
 * The feed's all.zip as OSV's exporter writes it (Python's zipfile): sizes in every local header,
 * no data descriptors. (Streamed zips with data descriptors are read too, but fflate's Unzip then
 * scans the compressed bytes one at a time, about 20 times slower.)
 */
export function syntheticZip(count: number): Uint8Array {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < count; i++) {
    const entry = record(i)
    files[`${entry.id}.json`] = strToU8(JSON.stringify(entry))
  }
  return zipSync(files, { level: 6 })
}
