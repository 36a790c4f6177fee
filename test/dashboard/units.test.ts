import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { exceptionRequestMachine } from '../../machines/exception-request.machine'
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine'
import { activePaths, drawMachine, machineGraph } from '../../server/dashboard/diagram'
import { html } from '../../server/dashboard/html'
import { diffLines, hunks } from '../../server/dashboard/line-diff'
import { MACHINE_CATALOG } from '../../server/dashboard/machine-catalog'

/** Pure parts of the dashboard: escaping, the line diff and the machine drawings. */

describe('html tag', () => {
  it('escapes interpolated text and attributes but not nested templates', () => {
    const name = '<script>alert("x")</script>'
    expect(html`<p title="${name}">${name}${html`<b>ok</b>`}</p>`.value).toBe('<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<b>ok</b></p>')
  })
})

describe('line diff', () => {
  it('finds the shortest edit script', () => {
    const ops = diffLines('abcabba'.split(''), 'cbabac'.split('')).map((l) => (l.kind === 'same' ? ' ' : l.kind === 'add' ? '+' : '-') + l.text).join('')
    expect(ops).toBe('-a-b c+b a b-b a+c')
  })
  it('groups changes into hunks with context', () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i}`)
    const b = [...a]
    b[5] = 'changed'
    b.splice(15, 1)
    expect(hunks(diffLines(a, b)).map((h) => [h.oldStart, h.newStart, h.lines.length])).toEqual([[3, 3, 8], [13, 13, 7]])
    expect(hunks(diffLines(a, a))).toEqual([])
  })
})

describe('machine diagrams', () => {
  it('cover every machine in machines/', () => {
    const files = readdirSync('machines').filter((f) => f.endsWith('.machine.ts')).map((f) => `machines/${f}`)
    expect(MACHINE_CATALOG.map((entry) => entry.file).sort()).toEqual(files.sort())
  })
  it('include eventless and invoke transitions with their guards', () => {
    const graph = machineGraph(webhookDeliveryMachine)
    const labels = (source: string, target: string) => graph.edges.find((e) => e.source === source && e.target === target)?.labels
    expect(labels('active', 'dispatching')).toEqual(['always [hasBacklog]'])
    expect(labels('quarantined', 'dispatching')).toEqual(['DEADLINE_REACHED', 'RELEASE'])
    expect(labels('delivering.preparing', 'delivering.sending')).toEqual(['done: takeBatch [batchTaken]'])
    expect(machineGraph(exceptionRequestMachine).edges.find((e) => e.target === 'withdrawn')?.labels).toEqual(['WITHDRAW [isRequester || mayDecide]'])
  })
  it('highlight the active states of a snapshot value', () => {
    expect(activePaths({ delivering: 'sending' })).toEqual(['delivering', 'delivering.sending'])
    const svg = drawMachine(webhookDeliveryMachine, { delivering: 'sending' })
    expect(svg).toContain('class="state is-active" data-state="delivering.sending"')
    expect(svg).toMatch(/class="state compound is-active" data-state="delivering"/)
    expect(svg).not.toMatch(/is-active" data-state="quarantined"/)
  })
})
