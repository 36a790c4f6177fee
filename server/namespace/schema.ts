import { z } from 'zod'
import spdxLicenseIds from 'spdx-license-ids/index.json' with { type: 'json' }
import { ClientId } from '../common/ids'
import { FIREWALL_PERMISSIONS } from '../firewall/schema'

/** Namespace permissions; `fw:*` strings held at namespace level apply to every firewall. */
export const NAMESPACE_PERMISSIONS = [
  'ns:admin',
  'ns:firewalls:create',
  'ns:teams:manage',
  'ns:tokens:manage',
  'ns:license-sets:manage',
  'ns:webhooks:read',
  'ns:webhooks:manage',
  'ns:audit:read',
] as const
export type NamespacePermission = (typeof NAMESPACE_PERMISSIONS)[number]

export const GrantablePermission = z.enum([...NAMESPACE_PERMISSIONS, ...FIREWALL_PERMISSIONS])
export type GrantablePermission = z.infer<typeof GrantablePermission>

const Timestamp = z.iso.datetime({ offset: true })

export const TeamInput = z
  .object({
    id: ClientId.optional(),
    name: z.string().min(1).max(200),
    permissions: z.array(GrantablePermission).default([]),
  })
  .strict()

export interface TeamMember {
  userId: string
  addedAt: string
}
export interface Team {
  id: string
  name: string
  permissions: GrantablePermission[]
  members: TeamMember[]
  createdAt: string
  updatedAt: string
}

export const TeamMemberInput = z.object({ userId: ClientId }).strict()

export const PersonalTokenInput = z
  .object({ name: z.string().min(1).max(200), expiresAt: Timestamp.optional() })
  .strict()

export const ServiceTokenInput = z
  .object({
    name: z.string().min(1).max(200),
    permissions: z.array(GrantablePermission).default([]),
    expiresAt: Timestamp.optional(),
  })
  .strict()

const SPDX_IDS = new Set<string>(spdxLicenseIds as string[])
/** SPDX license ids (case-sensitive as published), plus LicenseRef-* custom ids. */
const SpdxId = z
  .string()
  .refine((id) => SPDX_IDS.has(id) || /^LicenseRef-[A-Za-z0-9.-]+$/.test(id), 'must be an SPDX license id')

export const LicenseSetInput = z
  .object({
    id: ClientId.optional(),
    name: z.string().min(1).max(200),
    licenses: z.array(SpdxId).max(1000),
  })
  .strict()

export interface LicenseSet {
  id: string
  name: string
  licenses: string[]
  createdAt: string
  updatedAt: string
}

export type { NamespaceRecord, UserRecord, UserSource } from '../../storage/model/namespace'
