import { defineEventHandler } from 'h3'
import { useServices } from '../../app/runtime'
import { startProviderSignIn } from '../../dashboard/pages/provider-sign-in'

export default defineEventHandler((event) => startProviderSignIn(event, useServices))
