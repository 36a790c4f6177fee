import { z } from 'zod'
import type { Operation } from './operation'

type JsonSchema = Record<string, unknown>

/**
 * Converts a zod schema to JSON Schema 2020-12 for OpenAPI 3.1. Local `$defs` (recursive
 * selectors) are hoisted into `components.schemas` and their refs rewritten, because a
 * `#/$defs/...` ref would resolve against the OpenAPI document root.
 */
function toSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Record<string, JsonSchema>,
  name: string,
): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', cycles: 'ref', reused: 'inline' }) as JsonSchema
  delete json.$schema
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>
  delete json.$defs
  // Schemas registered with an id (`.meta({ id: 'Rule' })`) keep it, shared by every operation; the
  // input form of a schema (defaults optional) is a different shape, so it is named `<id>Input`.
  const componentName = (key: string) => {
    if (key.startsWith('__schema')) return `${name}_${key.replace(/^_+/, '')}`
    return io === 'input' && !key.endsWith('Input') ? `${key}Input` : key
  }
  const renamed = new Map(Object.keys(defs).map((key) => [key, componentName(key)]))
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite)
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string') {
          if (inner === '#') out[key] = `#/components/schemas/${name}`
          else {
            const def = inner.replace('#/$defs/', '')
            out[key] = renamed.has(def) ? `#/components/schemas/${renamed.get(def)}` : inner
          }
        } else out[key] = rewrite(inner)
      }
      return out
    }
    return value
  }
  for (const [key, def] of Object.entries(defs)) components[renamed.get(key)!] = rewrite(def) as JsonSchema
  const rewritten = rewrite(json) as JsonSchema
  if (JSON.stringify(rewritten).includes(`#/components/schemas/${name}"`)) {
    components[name] = rewritten
    return { $ref: `#/components/schemas/${name}` }
  }
  return rewritten
}

const PROBLEM: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'stable snake_case error code' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    permission: { type: 'string' },
  },
}

function parametersOf(operation: Operation, components: Record<string, JsonSchema>): JsonSchema[] {
  const params: JsonSchema[] = []
  const pathSchema = toSchema(operation.params, 'input', components, `${operation.id}Params`) as {
    properties?: Record<string, JsonSchema>
  }
  for (const [name, schema] of Object.entries(pathSchema.properties ?? {}))
    params.push({ name, in: 'path', required: true, schema })
  if (operation.query) {
    const querySchema = toSchema(operation.query, 'input', components, `${operation.id}Query`) as {
      properties?: Record<string, JsonSchema>
      required?: string[]
    }
    for (const [name, schema] of Object.entries(querySchema.properties ?? {})) {
      params.push({ name, in: 'query', required: querySchema.required?.includes(name) ?? false, schema })
    }
  }
  return params
}

/** The OpenAPI 3.1 document, derived from the same operation table and schemas the router validates with. */
export function buildOpenApi(operations: Operation[], info: { title: string; version: string }): JsonSchema {
  const components: Record<string, JsonSchema> = { Problem: PROBLEM }
  const paths: Record<string, Record<string, JsonSchema>> = {}
  for (const operation of operations) {
    const status = String(operation.successStatus ?? 200)
    const responses: Record<string, JsonSchema> = {
      [status]:
        status === '204' || !operation.response
          ? { description: 'Success' }
          : {
              description: 'Success',
              content: {
                [operation.mediaType ?? 'application/json']: {
                  schema: toSchema(operation.response, 'output', components, `${operation.id}Response`),
                },
              },
            },
    }
    for (const code of ['400', '401', '403', '404', '409', '412', '413', '415', '429']) {
      responses[code] = {
        description: 'Problem details (RFC 9457)',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      }
    }
    paths[operation.path] ??= {}
    paths[operation.path][operation.method.toLowerCase()] = {
      operationId: operation.id,
      summary: operation.summary,
      tags: [operation.tag],
      parameters: parametersOf(operation, components),
      ...(operation.body
        ? {
            requestBody: {
              required: operation.bodyOptional !== true,
              content: {
                'application/json': { schema: toSchema(operation.body, 'input', components, `${operation.id}Body`) },
              },
            },
          }
        : {}),
      responses,
    }
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'fwp_ personal or fws_ service token' },
      },
    },
  }
}
