import { defineEventHandler } from 'h3'
import { submitSignIn } from '../dashboard/pages/sign-in'

export default defineEventHandler(submitSignIn)
