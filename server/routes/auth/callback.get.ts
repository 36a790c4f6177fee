import { defineEventHandler } from 'h3'
import { useServices } from '../../app/runtime'
import { providerCallback } from '../../dashboard/pages/provider-sign-in'

export default defineEventHandler((event) => providerCallback(event, useServices))
