import { defineEventHandler } from 'h3'
import { useServices } from '../app/runtime'
import { submitSignIn } from '../dashboard/pages/sign-in'

export default defineEventHandler((event) => submitSignIn(event, useServices))
