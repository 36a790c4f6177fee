import type { ProxyRequest } from '../proxy-request'
import { serveFile, serveProject, serveRoot } from './download'
import { parsePypiPath } from './paths'
import { uploadFile } from './upload'
import { RegistryError } from '../responses'

/**
 * Routes one PyPI request: simple index (root and project pages, PEP 503/691), file
 * downloads (download decisions) and legacy uploads (upload decisions).
 */
export async function handlePypi(request: ProxyRequest): Promise<void> {
  const method = request.method
  const target = parsePypiPath(request.path, method)
  if (!target) throw new RegistryError(404, `${request.path} is not served by this PyPI index`)
  if (target.kind === 'upload') {
    if (method !== 'POST') throw new RegistryError(405, 'uploads are POST requests')
    return uploadFile(request)
  }
  if (method !== 'GET' && method !== 'HEAD') throw new RegistryError(405, `${method} ${request.path} is not supported`)
  if (target.kind === 'root') return serveRoot(request)
  if (target.kind === 'project') return serveProject(request, target.project)
  return serveFile(request, target.project, target.filename)
}
