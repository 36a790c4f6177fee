import { TimeSlice } from '../../common/time-slice'

/** One `<a ...>text</a>` of an HTML index page: its raw attribute text and its raw inner text. */
export interface HtmlAnchor {
  attributes: string
  text: string
}

const OPEN = /<a\s/gi
const CLOSE = /<\/a>/gi

/**
 * The anchors of an upstream's HTML page (PEP 503), in one forward pass taking turns with the
 * rest of the process. A regex such as `/<a\s([^>]*)>([\s\S]*?)<\/a>/` rescans the rest of the
 * page from every `<a ` that is never closed: quadratic, so a 64 MB page of open tags froze the
 * process. Here each search starts where the last one ended, and a page with no `</a>` (or no
 * `>`) left ends the pass.
 * @example await htmlAnchors('<a href="x.whl">x.whl</a>') // [{ attributes: 'href="x.whl"', text: 'x.whl' }]
 */
export async function htmlAnchors(html: string, slice = new TimeSlice()): Promise<HtmlAnchor[]> {
  const anchors: HtmlAnchor[] = []
  const open = new RegExp(OPEN.source, OPEN.flags)
  const close = new RegExp(CLOSE.source, CLOSE.flags)
  let at = 0
  for (;;) {
    open.lastIndex = at
    const start = open.exec(html)
    if (!start) break
    const attributesFrom = start.index + start[0].length
    const tagEnd = html.indexOf('>', attributesFrom)
    if (tagEnd < 0) break
    close.lastIndex = tagEnd + 1
    const end = close.exec(html)
    if (!end) break
    anchors.push({ attributes: html.slice(attributesFrom, tagEnd), text: html.slice(tagEnd + 1, end.index) })
    at = end.index + end[0].length
    if ((anchors.length & 255) === 0) await slice.step()
  }
  return anchors
}
