import { firstFound, type UpstreamScope } from '../upstream/selection'
import type { VersionList } from '../version-list'
import { leafFacts, registrationLeaves } from './registration'

/**
 * Every version of `id` from the registration of the first upstream (lookup order) that has one,
 * with its `published` time and `licenseExpression`. Null when none has it.
 * @example await nugetVersions(scope, 'Newtonsoft.Json')
 */
export async function nugetVersions(
  scope: UpstreamScope,
  id: string,
): Promise<(VersionList & { upstream: string }) | null> {
  const found = await firstFound(scope, (upstream) => registrationLeaves(scope, upstream, id.toLowerCase()))
  if (!found) return null
  return {
    upstream: found.upstream.id,
    versions: found.value.map(leafFacts),
    notes: {
      installScripts:
        'NuGet has no install scripts: dotnet restore runs no code of the package ' +
        '(only Visual Studio with packages.config runs a tools/install.ps1)',
    },
  }
}
