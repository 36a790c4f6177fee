import { invalid } from '../common/errors'

/**
 * A webhook's custom headers as the dashboard edits them: one `Name: value` per line, as they
 * go over the wire. Stored values show as the API's placeholder, which keeps them when sent back.
 */

/** Headers as lines for the text area. */
export const headerLines = (headers: Record<string, string> | undefined): string =>
  Object.entries(headers ?? {})
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n')

/**
 * The headers object of the lines; blank lines are skipped, a value keeps inner spaces. Names
 * and values are judged by the API's own validation; only a line without a colon is refused here.
 * Built with `Object.fromEntries`: a name is an own property whatever it is.
 * @example parseHeaderLines('X-Team: payments\n') // { 'X-Team': 'payments' }
 */
export function parseHeaderLines(text: string): Record<string, string> {
  const entries: [string, string][] = []
  const errors = text.split(/\r?\n/).flatMap((line, index) => {
    if (line.trim() === '') return []
    const colon = line.indexOf(':')
    if (colon <= 0) return [{ path: 'headers', message: `line ${index + 1}: expected "Name: value"` }]
    entries.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()])
    return []
  })
  if (errors.length) throw invalid('validation_failed', 'custom headers are one "Name: value" per line', errors)
  return Object.fromEntries(entries)
}
