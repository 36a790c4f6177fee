import { defineEventHandler } from 'h3'
import { handleDashboard } from '../../dashboard/routes'

/** Every dashboard page and form under `/namespaces/{ns}/...` (route table: server/dashboard/routes.ts). */
export default defineEventHandler(handleDashboard)
