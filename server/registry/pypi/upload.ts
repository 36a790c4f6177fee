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
import { checkDistributionFile } from './distribution-file'
import { encodeMultipart } from '../multipart-encode'
import { plainFileName, UploadRefused } from '../upload-refusal'

/** Form fields the decision reads: each must come once, or the upstream may read another copy. */
const SINGLE_FIELDS = [':action', 'name', 'version', 'content', 'license', 'license_expression'] as const

/** Refuses a form that holds a decided-on field twice (parsers differ on which copy wins). */
function requireSingleFields(parts: readonly { name: string }[]): void {
  for (const field of SINGLE_FIELDS) {
    const count = parts.filter((p) => p.name === field).length
    if (count > 1)
      throw new UploadRefused(
        'upload_ambiguous',
        field,
        `${count} copies`,
        `the upload holds the field ${field} ${count} times`,
      )
  }
}

/**
 * `POST legacy/` (twine's upload API: multipart with `:action=file_upload`, `name`,
 * `version`, the file as `content`): the file name must be a wheel or sdist of that name and
 * version (else 400, nothing forwarded), then the upload decision for that one file, then the
 * parts that were judged, re-encoded, to the publish target (its repository root, where
 * pypiserver, devpi, Nexus and Artifactory take uploads). A 2xx there emits
 * `package.published` with `file` set to the upload request path below the firewall prefix
 * (spec 6.5: `legacy/`), atomically with the decision's log entry.
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
  requireSingleFields(parts)
  checkDistributionFile(name, version, content.filename)
  for (const part of parts) if (part.filename !== undefined) plainFileName(part.filename, name)
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
  const forwarded = encodeMultipart(parts)
  const response = await callUpstream(request.scope.transport, target, pypiUrl(target, ''), {
    method: 'POST',
    body: forwarded.body,
    headers: { 'content-type': forwarded.contentType },
    authorization: pypiAuthorization(target),
    timeoutMs: request.scope.timeoutMs,
  })
  // Spec 6.5: the upload request path, below the firewall prefix as Maven's is (`legacy/`).
  const file = request.path.replace(/^\/+/, '')
  const published = response.ok ? [packageEvent(request, 'package.published', facts, target.id, file)] : []
  await recordDecision(request.services, record, published)
  if (response.ok) await forgetDocument(request.scope, `pypi:${normalizePackageName('pypi', name)}`)
  await relayResponse(request, response)
}
