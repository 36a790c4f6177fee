import type { Upstream } from '../../firewall/schema'
import { normalizePackageName } from '../../firewall/rules/names'
import { firstFound, type UpstreamScope } from '../upstream/selection'
import { callUpstream } from '../upstream/client'
import { fetchFactDocument } from '../fact-fetch'
import type { VersionEntry, VersionList } from '../version-list'
import { displayLicense } from './license'
import { pypiUrl } from './endpoint'
import { versionOfFile } from './paths'
import { fetchProjectPage, pypiAuthorization, type ProjectPage } from './simple-index'

const WHEEL_NOTE = 'has wheels: pip installs a wheel without running code of the package'
const SDIST_NOTE = 'source only: pip runs its build (setup) code at install'

/**
 * The versions a project page lists, each published at its earliest file's upload time (PEP 700;
 * an HTML page has none), yanked when every file is, and noted as having wheels or source only.
 * @example versionsOfPage(page, 'demo').map((v) => v.version) // ['1.0', '1.1']
 */
export function versionsOfPage(page: ProjectPage, project: string): VersionEntry[] {
  const byVersion = new Map<string, { published?: string; wheel: boolean; yanked: (string | true)[]; files: number }>()
  for (const file of page.files) {
    const version = versionOfFile(project, file.filename)
    if (!version) continue
    const seen = byVersion.get(version) ?? { wheel: false, yanked: [], files: 0 }
    seen.files++
    if (/\.whl$/i.test(file.filename)) seen.wheel = true
    if (file.yanked) seen.yanked.push(file.yanked)
    if (file.uploadTime && (!seen.published || Date.parse(file.uploadTime) < Date.parse(seen.published)))
      seen.published = file.uploadTime
    byVersion.set(version, seen)
  }
  return [...byVersion].map(([version, seen]) => {
    const reason = seen.yanked.find((y): y is string => typeof y === 'string' && y !== '')
    const yanked = seen.yanked.length === seen.files
    return {
      ecosystem: 'pypi',
      packageName: page.name,
      version,
      ...(seen.published ? { published: seen.published } : {}),
      ...(yanked ? { deprecated: reason ? `yanked: ${reason}` : 'yanked' } : {}),
      installNote: seen.wheel ? WHEEL_NOTE : SDIST_NOTE,
    }
  })
}

/**
 * The panel's license of one release, from the upstream's JSON API; undefined when the upstream
 * has none to give or could not be asked (the panel never fails for it).
 */
async function releaseLicense(scope: UpstreamScope, upstream: Upstream, project: string, version: string) {
  const url = pypiUrl(upstream, `pypi/${encodeURIComponent(project)}/${encodeURIComponent(version)}/json`)
  const doc = await fetchFactDocument(`the license of ${project} ${version}`, upstream, () =>
    callUpstream(scope.transport, upstream, url, {
      headers: { accept: 'application/json' },
      authorization: pypiAuthorization(upstream),
      timeoutMs: scope.timeoutMs,
    }),
  ).catch(() => undefined)
  const info = doc && typeof doc === 'object' ? (doc as { info?: unknown }).info : undefined
  return info && typeof info === 'object' ? displayLicense(info as Record<string, unknown>) : undefined
}

/**
 * Every version of `name` on the first upstream (lookup order) whose simple index has it; the
 * license of `version` only (one JSON API call: the index carries none). Null when none has it.
 * @example await pypiVersions(scope, 'Demo', '1.0')
 */
export async function pypiVersions(
  scope: UpstreamScope,
  name: string,
  version?: string,
): Promise<(VersionList & { upstream: string }) | null> {
  const project = normalizePackageName('pypi', name)
  const found = await firstFound(scope, (upstream) => fetchProjectPage(scope, upstream, project))
  if (!found) return null
  const versions = versionsOfPage(found.value, project)
  if (version) {
    const wanted = versions.find((v) => v.version === version)
    const license = wanted && (await releaseLicense(scope, found.upstream, project, version))
    if (wanted && license) wanted.license = license
  }
  return {
    upstream: found.upstream.id,
    versions,
    notes: {
      license: 'PyPI gives a license per release: shown for the requested version only',
      installScripts: 'PyPI has no install scripts; an sdist runs its build code at install, a wheel does not',
    },
  }
}
