import type { Operation } from '../http/operation'
import { firewallOperations } from './firewalls'
import { firewallLogOperations } from './firewall-log'
import { exceptionRequestOperations } from './exception-requests'
import { licenseSetOperations } from './license-sets'
import { namespaceOperations } from './namespace'
import { teamOperations } from './teams'
import { tokenOperations } from './tokens'
import { userOperations } from './users'
import { webhookOperations } from './webhooks'
import { advisoryOperations } from './advisories'
import { inventoryOperations } from './inventory'
import { exposureOperations } from './exposures'

/** Every API operation: the router and the OpenAPI document are both built from this list. */
export const operations: Operation[] = [
  ...firewallOperations,
  ...firewallLogOperations,
  ...exceptionRequestOperations,
  ...teamOperations,
  ...tokenOperations,
  ...userOperations,
  ...licenseSetOperations,
  ...namespaceOperations,
  ...webhookOperations,
  ...advisoryOperations,
  ...inventoryOperations,
  ...exposureOperations,
] as Operation[]
