import { defineEventHandler, setResponseHeader } from 'h3'
import { operations } from '../../operations'
import { buildOpenApi } from '../../http/openapi'

let document: string | null = null

/** `GET /v1/openapi.json`: no auth; built once from the operation table. */
export default defineEventHandler((event) => {
  document ??= JSON.stringify(
    buildOpenApi(operations, { title: 'Package firewall and webhook delivery API', version: '1.0.0' }),
  )
  setResponseHeader(event, 'content-type', 'application/json; charset=utf-8')
  return document
})
