import { recordDecision } from '../decision-recorder'
import { decideArtifact, loadPolicy, packageEvent } from '../artifact-decision'
import { forgetDocument, relayResponse, requirePublishTarget } from '../upstream/artifacts'
import { formField, parseMultipart } from '../multipart'
import type { ProxyRequest } from '../proxy-request'
import { pypiAuthorization } from './simple-index'
import { normalizePackageName } from '../../firewall/rules/names'
import { readBodyBytes } from '../request-body'
import { RegistryError } from '../responses'
import { callUpstream } from '../upstream/client'
import { pypiUrl } from './endpoint'
import { proxyFileUrl } from './render'

/**
 * `POST legacy/` (twine's upload API: multipart with `:action=file_upload`, `name`,
 * `version`, the file as `content`): the upload decision for that one file, then the
 * unchanged body to the publish target (its repository root, where pypiserver, devpi,
 * Nexus and Artifactory take uploads). A 2xx there emits `package.published` with `file` set
 * to the file's path below the firewall prefix (`files/{project}/{filename}`), atomically
 * with the decision's log entry.
 */
export async function uploadFile(request: ProxyRequest): Promise<void> {
  const target = requirePublishTarget(request)
  const contentType = request.headers['content-type']
  const raw = await readBodyBytes(request, request.maxBodyBytes)
  const parts = await parseMultipart(raw, contentType)
  if (!parts) throw new RegistryError(400, 'expected a multipart/form-data upload')
  const action = formField(parts, ':action')
  if (action !== 'file_upload')
    throw new RegistryError(400, `unsupported :action ${action ?? '(none)'}; only file_upload is accepted`)
  const name = formField(parts, 'name')?.trim()
  const version = formField(parts, 'version')?.trim()
  const content = parts.find((p) => p.name === 'content' && p.filename !== undefined)
  if (!name || !version || !content) throw new RegistryError(400, 'an upload needs name, version and a content file')
  const license = formField(parts, 'license_expression')?.trim() || formField(parts, 'license')?.trim()

  const policy = await loadPolicy(request)
  const facts = {
    ecosystem: 'pypi' as const,
    packageName: name,
    version,
    published: new Date(policy.ctx.now).toISOString(),
    ...(license ? { license } : {}),
  }
  const record = await decideArtifact(request, policy, 'upload', facts, target.id)
  const response = await callUpstream(target, pypiUrl(target, ''), {
    method: 'POST',
    body: raw,
    headers: { 'content-type': String(contentType) },
    authorization: pypiAuthorization(target),
    timeoutMs: request.scope.timeoutMs,
  })
  // `file` is the file's path below the firewall prefix, as Maven's is: where it is downloaded from.
  const file = proxyFileUrl('', normalizePackageName('pypi', name), content.filename ?? '')
  const published = response.ok ? [packageEvent(request, 'package.published', facts, target.id, file)] : []
  await recordDecision(request.services, record, published)
  if (response.ok) await forgetDocument(request.scope, `pypi:${normalizePackageName('pypi', name)}`)
  await relayResponse(request, response)
}
