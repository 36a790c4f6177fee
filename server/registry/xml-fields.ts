import { SaxesParser } from 'saxes'

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
 * treat differently, or refuse).
 * @example xmlFields(nuspec, ['package/metadata/id'])?.get('package/metadata/id')?.[0].text // 'Acme.Core'
 */
export function xmlFields(xml: string, paths: readonly string[]): Map<string, XmlField[]> | null {
  const wanted = new Set(paths)
  const found = new Map<string, XmlField[]>(paths.map((path) => [path, []]))
  const stack: string[] = []
  // The field whose own text is being read, and the depth it was opened at.
  let open: { field: XmlField; depth: number } | null = null
  const parser = new SaxesParser({ xmlns: true, position: false })
  let refused = false
  parser.on('doctype', () => {
    refused = true
  })
  parser.on('opentag', (tag) => {
    stack.push(tag.local)
    const path = stack.join('/')
    if (!wanted.has(path)) return
    const attributes = new Map(Object.values(tag.attributes).map((a) => [a.local, a.value]))
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
    parser.write(xml).close()
  } catch {
    return null
  }
  return refused ? null : found
}
