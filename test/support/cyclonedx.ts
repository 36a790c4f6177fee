import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'

const SCHEMA_DIR = join(
  dirname(createRequire(import.meta.url).resolve('@cyclonedx/cyclonedx-library/package.json')),
  'res',
  'schema',
)
const BASE = 'http://cyclonedx.org/schema/'

const schemaFile = (name: string) => JSON.parse(readFileSync(join(SCHEMA_DIR, name), 'utf8')) as Record<string, unknown>

/**
 * A validator of CycloneDX 1.5 JSON documents: the schema files `@cyclonedx/cyclonedx-library`
 * ships (draft-07), with the SPDX and JSF schemas it references under the names it uses for them.
 * Returns the errors of a document (empty when it is valid).
 */
export function cyclonedx15Validator(): (document: unknown) => string[] {
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats(ajv)
  // ajv-formats has no IRI formats: an IRI reference here is at least a string without spaces.
  ajv.addFormat('iri-reference', (value: string) => !/\s/.test(value))
  for (const name of ['spdx.SNAPSHOT.schema.json', 'jsf-0.82.SNAPSHOT.schema.json']) {
    const { $id: _id, ...schema } = schemaFile(name)
    ajv.addSchema(schema, `${BASE}${name}`)
  }
  const validate = ajv.compile(schemaFile('bom-1.5.SNAPSHOT.schema.json'))
  return (document) =>
    validate(document) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`)
}
