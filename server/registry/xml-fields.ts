import { setImmediate as nextTurn } from 'node:timers/promises'
import { SaxesParser } from 'saxes'

/** Characters parsed per turn of the event loop (a few milliseconds of work at most). */
const SLICE = 16 * 1024
/**
 * Deepest element nesting read. Nuspecs and Maven metadata nest 4 or 5 deep; saxes spends
 * several times longer per byte on deep nesting, so a document nested deeper is refused.
 */
const MAX_DEPTH = 64

/** One element found at a wanted path: its own text (CDATA and entities resolved) and attributes. */
export interface XmlField {
  text: string
  attributes: Map<string, string>
}

/**
 * The elements at the given paths (local names from the root, `package/metadata/id`), in
 * document order, read with a conforming XML parser (saxes): comments, CDATA sections,
 * character references and namespace prefixes mean what they mean to the .NET and Java
 * parsers the upstreams use, which a regular expression over the text gets wrong. Null when
 * the document is not well-formed XML or declares a DOCTYPE (whose entities upstream parsers
 * treat differently, or refuse), or nests elements deeper than 64. Namespaces are not resolved: elements are matched by local
 * name, as NuGet's reader does (saxes' namespace mode costs time quadratic in nesting depth).
 * The document is fed in slices with a turn of the event loop between them, so a large one
 * (a 16 MiB maven-metadata.xml) delays other requests by one slice at most.
 * @example (await xmlFields(nuspec, ['package/metadata/id']))?.get('package/metadata/id')?.[0].text // 'Acme.Core'
 */
export async function xmlFields(xml: string, paths: readonly string[]): Promise<Map<string, XmlField[]> | null> {
  const wanted = new Set(paths)
  // Every prefix of a wanted path: below any other element nothing can match, so the path of
  // an element is only built while it can still lead somewhere (a deeply nested document
  // costs time linear in its size, not in size times depth).
  const viable = new Set(paths.flatMap((path) => path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))))
  const found = new Map<string, XmlField[]>(paths.map((path) => [path, []]))
  // For each open element, its path when viable, else null.
  const stack: (string | null)[] = []
  // The field whose own text is being read, and the depth it was opened at.
  let open: { field: XmlField; depth: number } | null = null
  const parser = new SaxesParser({ xmlns: false, position: false })
  let refused = false
  parser.on('doctype', () => {
    refused = true
  })
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_DEPTH) refused = true
    const parent = stack.length === 0 ? '' : stack[stack.length - 1]
    const local = tag.name.slice(tag.name.indexOf(':') + 1)
    const path = parent === null ? null : parent ? `${parent}/${local}` : local
    stack.push(path !== null && viable.has(path) ? path : null)
    if (path === null || !wanted.has(path)) return
    const attributes = new Map(
      Object.entries(tag.attributes).map(([name, value]) => [name.slice(name.indexOf(':') + 1), value]),
    )
    const field: XmlField = { text: '', attributes }
    found.get(path)!.push(field)
    open = { field, depth: stack.length }
  })
  const append = (text: string) => {
    if (open && open.depth === stack.length) open.field.text += text
  }
  parser.on('text', append)
  parser.on('cdata', append)
  parser.on('closetag', () => {
    if (open && open.depth === stack.length) open = null
    stack.pop()
  })
  try {
    for (let at = 0; at < xml.length && !refused;) {
      let end = Math.min(at + SLICE, xml.length)
      // Never split a surrogate pair between two writes.
      if (end < xml.length && /[\uD800-\uDBFF]/.test(xml[end - 1])) end -= 1
      parser.write(xml.slice(at, end))
      at = end
      if (at < xml.length) await nextTurn()
    }
    parser.close()
  } catch {
    return null
  }
  return refused ? null : found
}
