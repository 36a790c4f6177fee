/**
 * `npm run receiver:types [-- <schema URL or file>]`: writes receiver/events.generated.ts from
 * the JSON Schema a running service serves (default http://127.0.0.1:$PORT/schemas/webhook-events-v1.json,
 * PORT defaulting to 3000) or from a saved copy of it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { generateEventTypes } from './generate'

export const GENERATED_FILE = resolve(import.meta.dirname, '../../receiver/events.generated.ts')

async function readSchema(source: string): Promise<unknown> {
  if (!/^https?:\/\//.test(source)) return JSON.parse(readFileSync(source, 'utf8'))
  const response = await fetch(source).catch((error: Error) => {
    throw new Error(`cannot reach ${source} (${error.message}): start the service (npm start) or pass a URL or file`)
  })
  if (!response.ok) throw new Error(`${source} answered ${response.status}`)
  return response.json()
}

async function main(): Promise<void> {
  const source = process.argv[2] ?? `http://127.0.0.1:${process.env.PORT ?? 3000}/schemas/webhook-events-v1.json`
  const schema = (await readSchema(source)) as Record<string, unknown>
  writeFileSync(GENERATED_FILE, generateEventTypes(schema))
  process.stdout.write(`wrote ${GENERATED_FILE} from ${source}\n`)
}

main().catch((error: Error) => {
  process.stderr.write(`receiver:types: ${error.message}\n`)
  process.exit(1)
})
