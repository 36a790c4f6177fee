import type { NamespaceCall, NamespacePorts } from './ports'
import type { z } from 'zod'
import { DomainError, invalid, notFound } from '../common/errors'
import { newId } from '../common/ids'
import { nowIso } from '../auth/call-context'
import { hasNamespacePermission, requireGrantable, requireNamespacePermission } from '../auth/permissions'
import { displayPrefix, generateToken, hashToken } from '../auth/tokens'
import type { TokenRecord } from '../../storage/repositories/tokens'
import type { PersonalTokenInput, ServiceTokenInput } from './schema'

interface IssueTokenInput {
  ns: string
  kind: 'personal' | 'service'
  name: string
  principalId: string
  createdBy: string
  permissions?: string[]
  expiresAt?: string | null
  /** Only for the operator's BOOTSTRAP_TOKEN: use this material instead of generating one. */
  material?: string
  /** A provider sign-in's token for one dashboard session (ends with it; not listed). */
  dashboardSession?: boolean
}

/** Creates a token; the material is returned here once and stored only as its hash. */
export async function issueToken(
  services: NamespacePorts,
  input: IssueTokenInput,
): Promise<{ record: TokenRecord; material: string }> {
  const material = input.material ?? generateToken(input.kind)
  const now = new Date(services.clock.now()).toISOString()
  const record: TokenRecord = {
    id: newId('tok', services.clock.now()),
    hash: hashToken(material),
    kind: input.kind,
    namespace: input.ns,
    name: input.name,
    prefix: displayPrefix(material),
    principalId: input.principalId,
    ...(input.kind === 'service' ? { permissions: input.permissions ?? [] } : {}),
    createdBy: input.createdBy,
    createdAt: now,
    expiresAt: input.expiresAt ?? null,
    lastUsedAt: null,
    ...(input.dashboardSession ? { dashboardSession: true as const } : {}),
  }
  await services.tokens.create(record)
  return { record, material }
}

/** The token as lists show it: never the material or its hash. */
export function publicToken(record: TokenRecord) {
  const base = {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    lastUsedAt: record.lastUsedAt,
  }
  return record.kind === 'service'
    ? { ...base, principalId: record.principalId, permissions: record.permissions ?? [] }
    : base
}

function checkExpiry(ctx: NamespaceCall, expiresAt: string | undefined): void {
  if (expiresAt && Date.parse(expiresAt) <= ctx.services.clock.now()) {
    throw invalid('expiry_in_past', 'expiresAt must be in the future', [
      { path: 'expiresAt', message: 'must be in the future' },
    ])
  }
}

export async function createPersonalToken(ctx: NamespaceCall, body: z.infer<typeof PersonalTokenInput>) {
  if (ctx.principal.type !== 'user')
    throw new DomainError(
      'forbidden',
      'users_only',
      'personal tokens belong to users; a service token cannot create one',
      { permission: 'user' },
    )
  checkExpiry(ctx, body.expiresAt)
  const { record, material } = await issueToken(ctx.services, {
    ns: ctx.ns,
    kind: 'personal',
    name: body.name,
    principalId: ctx.principal.id,
    createdBy: ctx.principal.id,
    expiresAt: body.expiresAt,
  })
  return { ...publicToken(record), token: material }
}

export async function createServiceToken(ctx: NamespaceCall, body: z.infer<typeof ServiceTokenInput>) {
  requireNamespacePermission(ctx.principal, 'ns:tokens:manage')
  requireGrantable(ctx.principal, body.permissions)
  checkExpiry(ctx, body.expiresAt)
  const { record, material } = await issueToken(ctx.services, {
    ns: ctx.ns,
    kind: 'service',
    name: body.name,
    principalId: newId('svc', ctx.services.clock.now()),
    createdBy: ctx.principal.id,
    permissions: body.permissions,
    expiresAt: body.expiresAt,
  })
  return { ...publicToken(record), token: material }
}

const active = (ctx: NamespaceCall) => (record: TokenRecord) =>
  !record.expiresAt || Date.parse(record.expiresAt) > ctx.services.clock.now()

export async function listPersonalTokens(ctx: NamespaceCall) {
  const all = await ctx.services.tokens.list(ctx.ns)
  return all
    .filter((r) => r.kind === 'personal' && r.principalId === ctx.principal.id && !r.dashboardSession)
    .filter(active(ctx))
    .map(publicToken)
}

export async function listServiceTokens(ctx: NamespaceCall) {
  requireNamespacePermission(ctx.principal, 'ns:tokens:manage')
  const all = await ctx.services.tokens.list(ctx.ns)
  return all
    .filter((r) => r.kind === 'service')
    .filter(active(ctx))
    .map(publicToken)
}

/** Revokes the caller's own personal token, or any token with `ns:tokens:manage`. */
export async function revokeToken(ctx: NamespaceCall, tokenId: string, ownerId?: string) {
  const record = await ctx.services.tokens.findById(ctx.ns, tokenId)
  const own = record?.kind === 'personal' && record.principalId === ctx.principal.id
  if (!record || record.revokedAt) throw notFound('token', tokenId)
  // A path that names the owner (the Users page) revokes only that owner's token.
  if (ownerId !== undefined && record.principalId !== ownerId) throw notFound('token', tokenId)
  if (!own) {
    // Someone else's personal token is not even visible without the manage permission.
    if (!hasNamespacePermission(ctx.principal, 'ns:tokens:manage') && record.kind === 'personal')
      throw notFound('token', tokenId)
    requireNamespacePermission(ctx.principal, 'ns:tokens:manage')
  }
  await ctx.services.tokens.revoke(record, nowIso(ctx))
}

/**
 * Revokes the expired tokens of provider sign-in sessions nobody signed out of, so they leave
 * the namespace's token index (sign-ins are rare enough to sweep on).
 */
export async function pruneSessionTokens(services: Pick<NamespacePorts, 'tokens' | 'clock'>, ns: string) {
  const now = services.clock.now()
  const expired = (await services.tokens.list(ns)).filter(
    (record) => record.dashboardSession && record.expiresAt && Date.parse(record.expiresAt) <= now,
  )
  for (const record of expired) await services.tokens.revoke(record, new Date(now).toISOString())
}
