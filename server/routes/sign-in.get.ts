import { defineEventHandler } from 'h3'
import { showSignIn } from '../dashboard/pages/sign-in'

export default defineEventHandler(showSignIn)
