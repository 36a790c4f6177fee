import { defineEventHandler } from 'h3'
import { submitSignOut } from '../dashboard/pages/sign-in'

export default defineEventHandler(submitSignOut)
