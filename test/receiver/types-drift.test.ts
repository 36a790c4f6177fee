import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateEventTypes } from '../../scripts/receiver-types/generate'
import { startServer, type RunningServer } from '../support/server'

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => server?.stop())

describe('receiver/events.generated.ts', () => {
  it('is what `npm run receiver:types` generates from the schema the built service serves', async () => {
    const response = await fetch(`${server.url}/schemas/webhook-events-v1.json`)
    expect(response.status).toBe(200)
    const generated = generateEventTypes(await response.json())
    const committed = readFileSync(new URL('../../receiver/events.generated.ts', import.meta.url), 'utf8')
    // On failure: start the service and run `npm run receiver:types`, then review the diff.
    expect(committed, 'receiver/events.generated.ts drifted from the served schema').toBe(generated)
  })

  it('would notice a drift: a new event type in the schema changes the output', async () => {
    const schema = await (await fetch(`${server.url}/schemas/webhook-events-v1.json`)).json()
    const changed = structuredClone(schema)
    changed.$defs.Event.allOf.unshift({
      if: { properties: { type: { const: 'package.deleted' } }, required: ['type'] },
      then: { properties: { data: { $ref: '#/$defs/PackageData' } } },
    })
    const output = generateEventTypes(changed)
    expect(output).not.toBe(generateEventTypes(schema))
    expect(output).toContain("export interface PackageDeletedEvent extends EventBase {\n  type: 'package.deleted'")
  })
})
