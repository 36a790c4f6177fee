/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  samples: Sample[]
  /** Metric family name -> type from `# TYPE` lines. */
  types: Map<string, string>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** Parses the text format (version 0.0.4) strictly enough to fail on a malformed line. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP')) continue
    if (line.startsWith('# TYPE')) {
      const [, , name, type] = line.split(' ')
      types.set(name, type)
      continue
    }
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`malformed exposition line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key] = value.replace(/\\(.)/g, '$1')
    samples.push({ name: match[1], labels, value: Number(match[3]) })
  }
  return { samples, types }
}

/** Sum of the samples of `name` whose labels include `where`. */
export function sum(exposition: Exposition, name: string, where: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0)
}
