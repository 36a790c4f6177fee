import { defineEventHandler } from 'h3'
import { useServices } from '../app/runtime'
import { showSignIn } from '../dashboard/pages/sign-in'

export default defineEventHandler((event) => showSignIn(event, useServices))
