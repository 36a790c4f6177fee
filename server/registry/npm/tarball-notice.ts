import { createHmac, timingSafeEqual } from 'node:crypto'
import { serviceSecret, type ServiceSecretPorts } from '../../auth/service-secret'
import { newId } from '../../common/ids'
import { problemOf } from '../../http/problem'
import type { ProxyRequest } from '../proxy-request'
import { RegistryError } from '../responses'
import { parseTarballPath, tarballFileName, type TarballPath } from './tarball-path'

/**
 * pnpm 12 prints nothing of a refused tarball but `Tarball server returned HTTP 403 for <url>`,
 * where `<url>` is the packument's `dist.tarball` as pnpm first asked for it. So a packument
 * served to pnpm 12 points each blocked version at a notice path that already names a request
 * id and the rule:
 * `{base}-/blocked/{requestId}/{ruleId}/{signature}/{name}/-/{name}-{version}.tgz`.
 * The id is minted when the packument is served and signed (HMAC over namespace, firewall,
 * package, version, id and rule) with a key derived from the service secret, so every process
 * accepts it and nobody can choose the id a block is logged under. The path carries no
 * verdict: a request to it is decided again (tarball.ts), and a block is logged under its id.
 */
const NOTICE =
  /^\/-\/blocked\/(req-[0-9a-z]{1,64})\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/([A-Za-z0-9_-]{22})(\/[^?#]+\.tgz)$/

/** Why a notice path was refused (RFC 9457 `code`). */
type NoticeRefusalCode = 'block_notice_not_found' | 'block_notice_signature_invalid'

/** A notice path that is not one this service minted: 404 (no notice) or 400 (bad signature). */
class NoticeRefused extends RegistryError {
  constructor(
    readonly code: NoticeRefusalCode,
    message: string,
  ) {
    super(code === 'block_notice_not_found' ? 404 : 400, message)
  }

  override get contentType(): string {
    return 'application/problem+json'
  }

  override body(): Record<string, unknown> {
    return { ...problemOf(this.status, this.code, this.message), error: this.message }
  }
}

const keys = new WeakMap<ServiceSecretPorts, Promise<Buffer>>()

/** The signing key: derived from the service secret for this one use. */
function noticeKey(services: ServiceSecretPorts): Promise<Buffer> {
  let key = keys.get(services)
  if (!key) {
    key = serviceSecret(services).then((secret) =>
      createHmac('sha256', secret).update('registry/npm tarball notice v1').digest(),
    )
    keys.set(services, key)
    key.catch(() => keys.delete(services))
  }
  return key
}

interface NoticeFields {
  ns: string
  firewall: string
  name: string
  version: string
  requestId: string
  ruleId: string
}

/** 128 bits of HMAC-SHA256 over the fields, base64url (22 characters). */
function sign(key: Buffer, fields: NoticeFields): string {
  const { ns, firewall, name, version, requestId, ruleId } = fields
  return createHmac('sha256', key)
    .update(JSON.stringify([ns, firewall, name, version, requestId, ruleId]))
    .digest()
    .subarray(0, 16)
    .toString('base64url')
}

/** The notice URLs of one packument answer: one key lookup, then a fresh id per blocked version. */
export async function noticeMinter(
  request: ProxyRequest,
): Promise<(name: string, version: string, ruleId: string) => string> {
  const key = await noticeKey(request.services)
  return (name, version, ruleId) => {
    const requestId = newId('req', request.services.clock.now())
    const fields = { ns: request.ns, firewall: request.firewall.id, name, version, requestId, ruleId }
    const file = tarballFileName(name, version)
    return `${request.baseUrl}-/blocked/${requestId}/${ruleId}/${sign(key, fields)}/${name}/-/${file}`
  }
}

/**
 * Whether a path is meant as a tarball notice: under `/-/blocked/` and ending in `.tgz` (bun's
 * notices end in a rule id: block-notice.ts). A malformed one is then refused, not taken for bun's.
 */
export function isTarballNotice(path: string): boolean {
  return path.startsWith('/-/blocked/') && path.endsWith('.tgz')
}

/** A notice path checked against its signature: the tarball it names and the request id it carries. */
export async function verifyTarballNotice(request: ProxyRequest): Promise<{ tarball: TarballPath; requestId: string }> {
  const match = NOTICE.exec(request.path)
  const tarball = match ? parseTarballPath(match[4]) : null
  if (!match || !tarball) throw new NoticeRefused('block_notice_not_found', `${request.path} is not a tarball notice`)
  const [, requestId, ruleId, presented] = match
  const fields = { ns: request.ns, firewall: request.firewall.id, ...tarball, requestId, ruleId }
  const expected = Buffer.from(sign(await noticeKey(request.services), fields))
  const given = Buffer.from(presented)
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new NoticeRefused(
      'block_notice_signature_invalid',
      `${request.path} was not issued by firewall ${request.firewall.id}: its signature does not match`,
    )
  return { tarball, requestId }
}
