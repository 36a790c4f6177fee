import { defineEventHandler } from 'h3'
import { useServices } from '../app/runtime'
import { submitSignOut } from '../dashboard/pages/sign-in'

export default defineEventHandler((event) => submitSignOut(event, useServices))
