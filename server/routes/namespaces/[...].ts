import { defineEventHandler } from 'h3'
import { useServices } from '../../app/runtime'
import { createDashboardHandler } from '../../dashboard/routes'

/** Every dashboard page and form under `/namespaces/{ns}/...` (route table: server/dashboard/routes.ts). */
export default defineEventHandler(createDashboardHandler(useServices))
