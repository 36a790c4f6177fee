import { serveMavenFile, serveMavenMetadata } from './download'
import { parseMavenPath } from './paths'
import { checkDeployPath } from './deploy-identity'
import { putMavenFile, putMavenMetadata } from './upload'
import type { ProxyRequest } from '../proxy-request'
import { RegistryError } from '../responses'

/**
 * Routes one Maven repository-layout request: GET/HEAD of files (download decisions) and
 * metadata (version filtering), PUT of files (upload decisions) and metadata (merged).
 */
export async function handleMaven(request: ProxyRequest): Promise<void> {
  const method = request.method
  // A deploy's path must be the layout path of what it is judged as (400 before anything else).
  if (method === 'PUT') checkDeployPath(request.path)
  const path = parseMavenPath(request.path)
  if (!path) throw new RegistryError(404, `${request.path} is not a Maven repository path`)
  if (method === 'GET' || method === 'HEAD')
    return path.kind === 'file' ? serveMavenFile(request, path) : serveMavenMetadata(request, path)
  if (method === 'PUT') return path.kind === 'file' ? putMavenFile(request, path) : putMavenMetadata(request, path)
  throw new RegistryError(405, `${method} is not supported on a Maven repository`)
}
