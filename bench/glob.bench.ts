/**
 * Glob benchmark: 1,000 package-name patterns at the limits, a
 * mix of realistic ones and adversarial ones (up to 107 stars, 214 characters), each matched
 * against one 214-character name. Prints per-pattern p50, p99 and max in microseconds and
 * whether every pattern stays under 1 ms; then the old backtracking RegExp on the realistic
 * subset only (on the adversarial ones it would not finish), as a baseline ratio.
 *   npm run bench:glob  (or npx tsx bench/glob.bench.ts [--reps 200])
 */
import { parseArgs } from 'node:util'
import { matchesGlob } from '../server/firewall/rules/glob'
import { MAX_PATTERNS_PER_RULE, MAX_PATTERN_LENGTH } from '../server/firewall/rules/pattern-limits'

const { values: args } = parseArgs({ options: { reps: { type: 'string', default: '200' } } })
const REPS = Number(args.reps)
const BATCHES = 5

// The longest name npm allows, scoped, made of the letter the adversarial patterns repeat.
const NAME = `@${'a'.repeat(100)}/${'a'.repeat(MAX_PATTERN_LENGTH - 102)}`

const cut = (pattern: string) => pattern.slice(0, MAX_PATTERN_LENGTH)

function realisticPatterns(count: number): string[] {
  const shapes = [
    (i: number) => `package-${i}`,
    (i: number) => `@scope-${i}/*`,
    (i: number) => `eslint-plugin-${i}-*`,
    (i: number) => `*-loader-${i}`,
    (i: number) => `@types/node-${i}?`,
    (i: number) => `@a*/${'a'.repeat(i % 120)}*`, // matches NAME: a long literal run after a star
    (i: number) => cut(`@${'a'.repeat(100)}/${'a'.repeat(i % 112)}*`), // a long literal prefix that matches
    (i: number) => cut(`${'lodash.'.repeat(1 + (i % 30))}*`),
  ]
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length](i))
}

// Shapes that make a backtracking engine explode, and shapes that make a linear matcher do its
// most work (a long part that almost fits at every place; `?` defeats the native search).
function adversarialPatterns(count: number): string[] {
  const shapes = [
    () => `${'*a'.repeat(30)}b`, // the reported one: 30 stars
    (i: number) => cut(`${'*a'.repeat(1 + (i % 106))}b*`), // up to 107 stars; fails only at the end
    (i: number) => cut(`@${'*a'.repeat(50)}/${'*a'.repeat(i % 55)}x*`),
    (i: number) => cut(`*${'a'.repeat(1 + (i % 200))}?b*`), // a wildcard part tried at every place
    (i: number) => cut(`*${'?a'.repeat(1 + (i % 100))}b*`),
    (i: number) => cut(`*${'a'.repeat(1 + (i % 200))}b*a`), // the native search's hardest case
  ]
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length](i))
}

/** The matcher before the fix: a glob compiled into an anchored, backtracking RegExp. */
function oldRegExp(pattern: string): RegExp {
  let source = ''
  for (const char of pattern) {
    if (char === '*') source += '.*'
    else if (char === '?') source += '.'
    else source += char.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
  }
  return new RegExp(`^${source}$`, 's')
}

/**
 * Microseconds per match of each matcher: the mean over a batch (the timer is coarser than one
 * match), the best of BATCHES batches (a pause of the shared machine or the GC is not the matcher).
 */
function timeEach(matchers: (() => boolean)[]): number[] {
  let sink = 0
  const perBatch = Math.max(1, Math.floor(REPS / BATCHES))
  const times = matchers.map((match) => {
    for (let r = 0; r < 20; r++) sink += match() ? 1 : 0 // warm-up
    let best = Number.POSITIVE_INFINITY
    for (let b = 0; b < BATCHES; b++) {
      const started = process.hrtime.bigint()
      for (let r = 0; r < perBatch; r++) sink += match() ? 1 : 0
      best = Math.min(best, Number(process.hrtime.bigint() - started) / 1_000 / perBatch)
    }
    return best
  })
  if (sink < 0) console.log(sink) // keeps the calls from being optimised away
  return times
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const us = (value: number) => `${value.toFixed(2)} µs`

function summary(label: string, times: number[]): { p50: number; p99: number; max: number; total: number } {
  const sorted = [...times].sort((a, b) => a - b)
  const total = sorted.reduce((a, b) => a + b, 0)
  const figures = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)!, total }
  console.log(
    `${label.padEnd(34)} n=${String(times.length).padStart(4)}  p50 ${us(figures.p50)}  p99 ${us(figures.p99)}  ` +
      `max ${us(figures.max)}  all ${us(figures.total)}`,
  )
  return figures
}

function main() {
  const realistic = realisticPatterns(700)
  const adversarial = adversarialPatterns(MAX_PATTERNS_PER_RULE - realistic.length)
  const patterns = [...realistic, ...adversarial]
  const longest = Math.max(...patterns.map((p) => p.length))
  const stars = Math.max(...patterns.map((p) => p.split('*').length - 1))
  const matching = patterns.filter((p) => matchesGlob(p, NAME)).length
  console.log(
    `glob bench: ${patterns.length} patterns (${realistic.length} realistic, ${adversarial.length} adversarial), ` +
      `longest ${longest} chars, most stars ${stars}, name ${NAME.length} chars, ${matching} match; ` +
      `${REPS} reps each, best of ${BATCHES} batches`,
  )

  // Interleaved order, so that machine noise does not fall on one group only.
  const times = timeEach(patterns.map((p) => () => matchesGlob(p, NAME)))
  const all = summary('linear matcher, all patterns', times)
  summary('linear matcher, realistic', times.slice(0, realistic.length))
  summary('linear matcher, adversarial', times.slice(realistic.length))
  console.log(`every pattern under 1 ms: ${all.max < 1_000 ? 'yes' : 'NO'} (max ${us(all.max)})`)

  // Baseline: compiled once (the old code cached compiled patterns), then matched.
  const compiled = realistic.map(oldRegExp)
  for (const [i, re] of compiled.entries()) {
    if (re.test(NAME) !== matchesGlob(realistic[i], NAME)) throw new Error(`old and new disagree on ${realistic[i]}`)
  }
  const oldTimes = timeEach(compiled.map((re) => () => re.test(NAME)))
  const old = summary('old RegExp, realistic (baseline)', oldTimes)
  const again = timeEach(realistic.map((p) => () => matchesGlob(p, NAME)))
  const newRealistic = summary('linear matcher, realistic (again)', again)
  console.log(
    `linear / old RegExp on the realistic subset: p50 ${(newRealistic.p50 / old.p50).toFixed(2)}x, ` +
      `total ${(newRealistic.total / old.total).toFixed(2)}x (below 1 = faster)`,
  )
}

main()
