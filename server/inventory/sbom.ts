import { Enums, Models, Serialize, Spec } from '@cyclonedx/cyclonedx-library'
import { PackageURL } from 'packageurl-js'
import type { Ecosystem } from '../firewall/schema'
import type { InventoryEntry } from './entries'

/** The media type of a CycloneDX JSON document. */
export const CYCLONEDX_JSON = 'application/vnd.cyclonedx+json'

/** purl type, namespace and name of a package of each ecosystem (purl-spec PURL-TYPES). */
const PURL_PARTS: Record<Ecosystem, (name: string) => { type: string; namespace?: string; name: string }> = {
  npm: (name) => {
    const slash = name.startsWith('@') ? name.indexOf('/') : -1
    return slash > 0
      ? { type: 'npm', namespace: name.slice(0, slash), name: name.slice(slash + 1) }
      : { type: 'npm', name }
  },
  // The purl-spec names PyPI packages in their normalized form.
  pypi: (name) => ({ type: 'pypi', name: name.toLowerCase().replace(/[-_.]+/g, '-') }),
  maven: (name) => {
    const colon = name.indexOf(':')
    return colon > 0
      ? { type: 'maven', namespace: name.slice(0, colon), name: name.slice(colon + 1) }
      : { type: 'maven', name }
  },
  nuget: (name) => ({ type: 'nuget', name }),
}

/**
 * The package URL of a served version.
 * @example purlOf('npm', '@babel/core', '7.0.0').toString() // 'pkg:npm/%40babel/core@7.0.0'
 */
export function purlOf(ecosystem: Ecosystem, name: string, version: string): PackageURL {
  const parts = PURL_PARTS[ecosystem](name)
  return new PackageURL(parts.type, parts.namespace, parts.name, version, undefined, undefined)
}

export interface SbomSubject {
  namespace: string
  firewall: string
  ecosystem: Ecosystem
  /** The period the document covers, as asked (ISO), when asked. */
  since?: string
  until?: string
  /** When the document is made (ms). */
  now: number
}

/**
 * A CycloneDX 1.5 JSON document of what a firewall served: the firewall as the described
 * component, and one library component per served version with its purl (deduplicated by purl,
 * which also names it as `bom-ref`). Built and serialised with `@cyclonedx/cyclonedx-library`.
 */
export function buildSbom(subject: SbomSubject, entries: readonly InventoryEntry[]): string {
  const bom = new Models.Bom()
  bom.metadata.timestamp = new Date(subject.now)
  bom.metadata.component = new Models.Component(Enums.ComponentType.Application, subject.firewall, {
    bomRef: `firewall:${subject.namespace}/${subject.firewall}`,
    description: `package versions firewall ${subject.firewall} served`,
  })
  const period = [
    ['package-firewall:namespace', subject.namespace],
    ['package-firewall:served-since', subject.since],
    ['package-firewall:served-until', subject.until],
  ] as const
  for (const [name, value] of period) if (value) bom.metadata.properties.add(new Models.Property(name, value))
  const seen = new Set<string>()
  for (const entry of entries) {
    const purl = purlOf(entry.ecosystem as Ecosystem, entry.packageName, entry.version)
    const ref = purl.toString()
    if (seen.has(ref)) continue
    seen.add(ref)
    const component = new Models.Component(Enums.ComponentType.Library, purl.name, {
      bomRef: ref,
      group: purl.namespace ?? undefined,
      version: entry.version,
      purl: ref,
    })
    component.properties.add(new Models.Property('package-firewall:first-served', entry.firstServedAt))
    component.properties.add(new Models.Property('package-firewall:last-served', entry.lastServedAt))
    component.properties.add(new Models.Property('package-firewall:count', String(entry.count)))
    bom.components.add(component)
  }
  const serializer = new Serialize.JsonSerializer(new Serialize.JSON.Normalize.Factory(Spec.Spec1dot5))
  return serializer.serialize(bom, { sortLists: true })
}
