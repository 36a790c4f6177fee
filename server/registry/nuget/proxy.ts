import { serveNugetRead } from './download'
import { parseNugetPath } from './paths'
import { pushPackage, unlistPackage } from './push'
import type { ProxyRequest } from '../proxy-request'
import { RegistryError } from '../responses'
import { isNugetV2Request, v2Refusal } from './v2'

/**
 * Routes one NuGet v3 request: service index, flat container and registrations (reads),
 * push (`PUT api/v2/package`, upload decision) and unlist (`DELETE api/v2/package/{id}/{version}`).
 */
export async function handleNuget(request: ProxyRequest): Promise<void> {
  const method = request.method
  const path = parseNugetPath(request.path)
  if (!path) {
    if (isNugetV2Request(request.path)) throw new RegistryError(404, v2Refusal(request.baseUrl))
    throw new RegistryError(404, `${request.path} is not served by this NuGet feed`)
  }
  if (path.kind === 'push') {
    if (method !== 'PUT') throw new RegistryError(405, 'push is PUT api/v2/package')
    return pushPackage(request)
  }
  if (path.kind === 'unlist') {
    if (method !== 'DELETE') throw new RegistryError(405, 'unlist is DELETE api/v2/package/{id}/{version}')
    return unlistPackage(request, path.id, path.version)
  }
  if (method !== 'GET' && method !== 'HEAD') throw new RegistryError(405, `${method} ${request.path} is not supported`)
  return serveNugetRead(request, path)
}
