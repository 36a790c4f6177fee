import { z } from 'zod'
import { ClientId } from '../common/ids'
import { defineOperation } from '../http/operation'
import { member, namespace } from '../http/access'
import { LicenseSetInput } from '../namespace/schema'
import {
  createLicenseSet,
  deleteLicenseSet,
  getLicenseSet,
  listLicenseSets,
  updateLicenseSet,
} from '../namespace/license-sets'
import { NsParams } from './common'

const tag = 'License sets'
const SetParams = NsParams.extend({ licenseSet: ClientId })
const audit = (action: string) => ({
  action,
  resourceType: 'license-set',
  resourceId: (p: Record<string, string | undefined>) => p.licenseSet,
})
const LicenseSetView = z.object({
  id: z.string(),
  name: z.string(),
  licenses: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
})

export const licenseSetOperations = [
  defineOperation({
    id: 'listLicenseSets',
    method: 'GET',
    path: '/v1/{ns}/license-sets',
    summary: 'List license sets',
    tag,
    params: NsParams,
    access: member,
    response: z.array(LicenseSetView),
    audit: audit('license-set.list'),
    handler: async ({ ctx }) => ({ body: await listLicenseSets(ctx) }),
  }),
  defineOperation({
    id: 'getLicenseSet',
    method: 'GET',
    path: '/v1/{ns}/license-sets/{licenseSet}',
    summary: 'Get a license set',
    tag,
    params: SetParams,
    access: member,
    response: LicenseSetView,
    audit: audit('license-set.read'),
    handler: async ({ ctx, params }) => ({ body: await getLicenseSet(ctx, params.licenseSet) }),
  }),
  defineOperation({
    id: 'createLicenseSet',
    method: 'POST',
    path: '/v1/{ns}/license-sets',
    summary: 'Create a license set',
    tag,
    params: NsParams,
    access: namespace('ns:license-sets:manage'),
    body: LicenseSetInput,
    response: LicenseSetView,
    successStatus: 201,
    audit: audit('license-set.create'),
    handler: async ({ ctx, body }) => {
      const set = await createLicenseSet(ctx, body)
      return { status: 201, body: set, headers: { location: `/v1/${ctx.ns}/license-sets/${set.id}` } }
    },
  }),
  defineOperation({
    id: 'updateLicenseSet',
    method: 'PUT',
    path: '/v1/{ns}/license-sets/{licenseSet}',
    summary: 'Update a license set',
    tag,
    params: SetParams,
    access: namespace('ns:license-sets:manage'),
    body: LicenseSetInput,
    response: LicenseSetView,
    audit: audit('license-set.update'),
    handler: async ({ ctx, params, body }) => ({ body: await updateLicenseSet(ctx, params.licenseSet, body) }),
  }),
  defineOperation({
    id: 'deleteLicenseSet',
    method: 'DELETE',
    path: '/v1/{ns}/license-sets/{licenseSet}',
    summary: 'Delete a license set',
    tag,
    params: SetParams,
    access: namespace('ns:license-sets:manage'),
    successStatus: 204,
    audit: audit('license-set.delete'),
    handler: async ({ ctx, params }) => (await deleteLicenseSet(ctx, params.licenseSet), { status: 204 }),
  }),
]
