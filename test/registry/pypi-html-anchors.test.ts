import { describe, expect, it } from 'vitest'
import { htmlAnchors } from '../../server/registry/pypi/html-anchors'
import { TimeSlice } from '../../server/common/time-slice'

/** The PEP 503 page reader: what the old regex read, in one forward pass. */

const OLD = /<a\s([^>]*)>([\s\S]*?)<\/a>/gi

describe('htmlAnchors', () => {
  it('reads what the regex read on index pages, in upper and lower case and across lines', async () => {
    const page = [
      '<!DOCTYPE html><html><body><h1>Links for fw-good</h1>',
      '<a href="../../files/fw_good-1.0.tar.gz#sha256=ab12" data-requires-python="&gt;=3.8">fw_good-1.0.tar.gz</a><br/>',
      '<A HREF="fw_good-2.0-py3-none-any.whl" data-yanked="">fw_good-2.0-py3-none-any.whl</A>',
      '<a\thref="x.whl"\n>x\n.whl</a>',
      '<area href="not-an-anchor"></area><abbr>no</abbr>',
      '</body></html>',
    ].join('\n')
    const expected = [...page.matchAll(OLD)].map((m) => ({ attributes: m[1], text: m[2] }))
    expect(expected).toHaveLength(3)
    expect(await htmlAnchors(page)).toEqual(expected)
  })

  it('ends at the first anchor that is never closed, in one pass (the regex rescanned the page from every one)', async () => {
    expect(await htmlAnchors('<a href="a.whl">a.whl</a>' + '<a x>'.repeat(2_000_000))).toEqual([
      { attributes: 'href="a.whl"', text: 'a.whl' },
    ])
    expect(await htmlAnchors('<a ' + 'x'.repeat(1_000_000))).toEqual([])
  })

  it('takes turns on a page of many anchors', async () => {
    let steps = 0
    const slice = new (class extends TimeSlice {
      override async step() {
        steps++
      }
    })()
    const anchors = await htmlAnchors('<a href="f.whl">f.whl</a>\n'.repeat(10_000), slice)
    expect(anchors).toHaveLength(10_000)
    expect(steps).toBe(Math.floor(10_000 / 256))
  })
})
