import { defineEventHandler } from 'h3'
import { useServices } from '../app/runtime'
import { rootRedirect } from '../dashboard/pages/sign-in'

/** `GET /`: the dashboard home of a signed-in viewer, else the sign-in page. */
export default defineEventHandler((event) => rootRedirect(event, useServices))
