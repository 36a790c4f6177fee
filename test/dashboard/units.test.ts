import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { exceptionRequestMachine } from '../../machines/exception-request.machine'
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine'
import { activePaths, drawMachine, layoutMachine, machineGraph } from '../../server/dashboard/diagram'
import type { Box } from '../../server/dashboard/diagram/layout'
import { html } from '../../server/dashboard/html'
import { diffLines, hunks } from '../../server/dashboard/line-diff'
import { MACHINE_CATALOG } from '../../server/dashboard/machine-catalog'
import { Form } from '../../server/dashboard/request'
import { headerLines, parseHeaderLines } from '../../server/dashboard/header-lines'
import { OVERVIEW_SCAN_BUDGET, overviewScanLimit } from '../../server/dashboard/pages/overview'
import { BLOCK_SCAN_LIMIT } from '../../server/firewall/block-summary'
import { applyIntent, draftOf, readDraft, selectorField, selectorOf } from '../../server/dashboard/selector-draft'

/** Pure parts of the dashboard: escaping, the line diff and the machine drawings. */

describe('html tag', () => {
  it('escapes interpolated text and attributes but not nested templates', () => {
    const name = '<script>alert("x")</script>'
    expect(html`<p title="${name}">${name}${html`<b>ok</b>`}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<b>ok</b></p>',
    )
  })
})

describe('line diff', () => {
  it('finds a shortest edit script, numbering each line on its sides', () => {
    const [a, b] = ['abcabba'.split(''), 'cbabac'.split('')]
    const lines = diffLines(a, b)
    // Myers' example: 5 edits is the minimum; the script must rebuild both texts.
    expect(lines.filter((l) => l.kind !== 'same')).toHaveLength(5)
    expect(lines.filter((l) => l.kind !== 'add').map((l) => l.text)).toEqual(a)
    expect(lines.filter((l) => l.kind !== 'del').map((l) => l.text)).toEqual(b)
    expect(lines.filter((l) => l.oldNo !== undefined).map((l) => l.oldNo)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(lines.filter((l) => l.newNo !== undefined).map((l) => l.newNo)).toEqual([1, 2, 3, 4, 5, 6])
    expect(diffLines(['x', 'y'], ['x', 'z'])).toEqual([
      { kind: 'same', text: 'x', oldNo: 1, newNo: 1 },
      { kind: 'del', text: 'y', oldNo: 2 },
      { kind: 'add', text: 'z', newNo: 2 },
    ])
  })
  it('groups changes into hunks with context', () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i}`)
    const b = [...a]
    b[5] = 'changed'
    b.splice(15, 1)
    expect(hunks(diffLines(a, b)).map((h) => [h.oldStart, h.newStart, h.lines.length])).toEqual([
      [3, 3, 8],
      [13, 13, 7],
    ])
    expect(hunks(diffLines(a, a))).toEqual([])
  })
})

describe('machine diagrams', () => {
  it('cover every machine in machines/', () => {
    const files = readdirSync('machines')
      .filter((f) => f.endsWith('.machine.ts'))
      .map((f) => `machines/${f}`)
    expect(MACHINE_CATALOG.map((entry) => entry.file).sort()).toEqual(files.sort())
  })
  it('include eventless and invoke transitions with their guards', () => {
    const graph = machineGraph(webhookDeliveryMachine)
    const labels = (source: string, target: string) =>
      graph.edges.find((e) => e.source === source && e.target === target)?.labels
    expect(labels('active', 'dispatching')).toEqual(['always [hasBacklog]', 'EVENTS_BUFFERED [reportsBacklog]'])
    expect(labels('quarantined', 'dispatching')).toEqual(['DEADLINE_REACHED', 'RELEASE'])
    expect(labels('delivering.preparing', 'delivering.sending')).toEqual(['done: takeBatch [batchTaken]'])
    expect(labels('delivering.sending', 'retrying')).toEqual([
      'done: deliverBatch [hasAttemptsLeft]',
      'error: deliverBatch [hasAttemptsLeft]',
    ])
    expect(machineGraph(exceptionRequestMachine).edges.find((e) => e.target === 'withdrawn')?.labels).toEqual([
      'WITHDRAW [isRequester || mayDecide]',
    ])
  })
  it('highlight the active states of a snapshot value', async () => {
    expect(activePaths({ delivering: 'sending' })).toEqual(['delivering', 'delivering.sending'])
    const svg = await drawMachine(webhookDeliveryMachine, { delivering: 'sending' })
    expect(svg).toContain('class="state is-active" data-state="delivering.sending"')
    expect(svg).toMatch(/class="state compound is-active" data-state="delivering"/)
    expect(svg).not.toMatch(/is-active" data-state="quarantined"/)
  })
  it('draw transitions that stay in their state as loops, as the Mermaid export does', async () => {
    const graph = machineGraph(webhookDeliveryMachine)
    expect(graph.edges.find((e) => e.source === 'active' && e.target === 'active')?.labels).toEqual([
      'EVENTS_BUFFERED',
      'ENABLED',
      'SETTINGS_CHANGED',
    ])
    // A compound state's own loop (events its children all take).
    expect(graph.edges.find((e) => e.source === 'delivering' && e.target === 'delivering')?.labels).toEqual([
      'EVENTS_BUFFERED',
      'DISABLED',
      'ENABLED',
      'SETTINGS_CHANGED',
    ])
    const svg = await drawMachine(webhookDeliveryMachine)
    for (const state of ['active', 'pacing', 'retrying', 'quarantined', 'delivering'])
      expect(svg).toContain(`data-edge="${state}->${state}"`)
  })
  it.each([
    ['webhook delivery', webhookDeliveryMachine],
    ['exception request', exceptionRequestMachine],
  ])(
    'lay out the %s machine with orthogonal routes from border to border and every label placed apart',
    async (_, machine) => {
      const graph = machineGraph(machine)
      const layout = await layoutMachine(graph)
      expect(layout.edges).toHaveLength(graph.edges.length)
      const onBorder = (p: { x: number; y: number }, b: Box) =>
        p.x >= b.x - 1 &&
        p.x <= b.x + b.w + 1 &&
        p.y >= b.y - 1 &&
        p.y <= b.y + b.h + 1 &&
        (Math.abs(p.x - b.x) < 1 ||
          Math.abs(p.x - b.x - b.w) < 1 ||
          Math.abs(p.y - b.y) < 1 ||
          Math.abs(p.y - b.y - b.h) < 1)
      const overlap = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
      const labels: Box[] = []
      for (const edge of layout.edges) {
        expect(edge.points.length).toBeGreaterThanOrEqual(2)
        for (let i = 1; i < edge.points.length; i++) {
          const [a, b] = [edge.points[i - 1], edge.points[i]]
          expect(
            Math.abs(a.x - b.x) < 0.01 || Math.abs(a.y - b.y) < 0.01,
            `${edge.source}->${edge.target} segment ${i}`,
          ).toBe(true)
        }
        expect(
          onBorder(edge.points[0], layout.boxes.get(edge.source)!),
          `${edge.source}->${edge.target} starts on its source`,
        ).toBe(true)
        expect(
          onBorder(edge.points.at(-1)!, layout.boxes.get(edge.target)!),
          `${edge.source}->${edge.target} ends on its target`,
        ).toBe(true)
        expect(edge.label?.lines).toEqual(
          graph.edges.find((e) => e.source === edge.source && e.target === edge.target)!.labels,
        )
        labels.push(edge.label!)
      }
      const leaves = [...layout.boxes.entries()]
        .filter(([id]) => !graph.nodes.get(id)!.children.length)
        .map(([, box]) => box)
      for (const [i, label] of labels.entries()) {
        for (const other of labels.slice(i + 1)) expect(overlap(label, other)).toBe(false)
        for (const box of leaves) expect(overlap(label, box)).toBe(false)
      }
    },
  )
})

describe('selector builder', () => {
  const nested = {
    function: {
      name: 'any' as const,
      selectors: [
        { function: { name: 'packageName' as const, patterns: ['a-*', 'b'] } },
        {
          function: {
            name: 'not' as const,
            selector: { function: { name: 'vulnerability' as const, minSeverity: 'high' as const, minCvss: 7.5 } },
          },
        },
      ],
    },
  }

  it('turns a selector into fields and back without loss', () => {
    const form = new Form(new URLSearchParams())
    expect(selectorOf(draftOf(nested))).toEqual(nested)
    expect(selectorOf(readDraft(form))).toEqual({ function: { name: '' } })
    const posted = new Form(
      new URLSearchParams([
        ['s.name', 'all'],
        ['s.0.name', 'minimumAge'],
        ['s.0.duration', ' 7d '],
        ['s.0.patterns', 'ignored'],
        ['s.1.name', 'license'],
        ['s.1.licenseSet', 'ls-oss'],
        ['s.1.mode', 'deny'],
      ]),
    )
    expect(selectorOf(readDraft(posted))).toEqual({
      function: {
        name: 'all',
        selectors: [
          { function: { name: 'minimumAge', duration: '7d' } },
          { function: { name: 'license', licenseSet: 'ls-oss', mode: 'deny' } },
        ],
      },
    })
  })

  it('adds and removes conditions by path, ignoring malformed intents', () => {
    const draft = draftOf(nested)
    expect(applyIntent(draft, 'add:s').children).toHaveLength(3)
    expect(applyIntent(draft, 'remove:s.0').children.map((c) => c.name)).toEqual(['not'])
    expect(applyIntent(draft, 'add:s.1').children[1].children).toHaveLength(2)
    expect(applyIntent(draft, 'remove:s.__proto__')).toEqual(draft)
    expect(applyIntent(draft, 'add:s.9.9')).toEqual(draft)
  })

  it('places API error paths on the fields that show them', () => {
    expect(selectorField('selector.function.selectors[1].function.selector.function.minCvss')).toBe('s.1.0.minCvss')
    expect(selectorField('rules[4].selector.function.patterns[2]')).toBe('s.patterns')
    expect(selectorField('selector.function.selectors[0]')).toBe('s.0.name')
    expect(selectorField('selector.function.selectors')).toBe('s.name')
    expect(selectorField('description')).toBeUndefined()
  })
})

describe('custom header lines', () => {
  it('reads one "Name: value" per line, skipping blank lines and keeping colons inside values', () => {
    expect(parseHeaderLines('X-Team: payments\r\n\n  Authorization: Bearer a:b  \n')).toEqual({
      'X-Team': 'payments',
      Authorization: 'Bearer a:b',
    })
    expect(headerLines({ 'X-Team': '[REDACTED]', 'X-Env': 'prod' })).toBe('X-Team: [REDACTED]\nX-Env: prod')
    expect(parseHeaderLines(headerLines({ 'X-A': '1', 'X-B': '' }))).toEqual({ 'X-A': '1', 'X-B': '' })
  })

  it('refuses a line without a name before its colon, naming the line', () => {
    for (const text of ['X-Team payments', 'X-A: 1\n: value']) {
      let refused: unknown
      try {
        parseHeaderLines(text)
      } catch (error) {
        refused = error
      }
      expect(refused).toMatchObject({ code: 'validation_failed', details: { errors: [{ path: 'headers' }] } })
    }
  })

  it('makes every name an own property, `__proto__` included, for the API to judge', () => {
    const headers = parseHeaderLines('__proto__: x')
    expect(Object.prototype.hasOwnProperty.call(headers, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype)
  })
})

describe('the overview scan budget', () => {
  it('gives each firewall an equal share of the budget, between the floor and the per-firewall limit', () => {
    expect(overviewScanLimit(0)).toBe(BLOCK_SCAN_LIMIT)
    expect(overviewScanLimit(4)).toBe(BLOCK_SCAN_LIMIT)
    expect(overviewScanLimit(8)).toBe(OVERVIEW_SCAN_BUDGET / 8)
    expect(overviewScanLimit(1_000)).toBe(2_000)
    for (const n of [5, 17, 99]) expect(overviewScanLimit(n) * n).toBeLessThanOrEqual(OVERVIEW_SCAN_BUDGET)
  })
})
