/**
 * Maven's `ComparableVersion` ordering (maven-artifact 3.8), written as a pure function: the
 * version is split at `.`, `-` and digit/letter transitions into nested lists of numbers and
 * qualifiers, trailing "null" items (0, "", "ga", "final") are dropped, and qualifiers order
 * alpha < beta < milestone < rc = cr < snapshot < "" = ga = final = release < sp < others.
 */
type Item = { kind: 'int'; value: bigint } | { kind: 'str'; value: string } | { kind: 'list'; items: Item[] }

const QUALIFIERS = ['alpha', 'beta', 'milestone', 'rc', 'snapshot', '', 'sp']
const ALIASES: Record<string, string> = { ga: '', final: '', release: '', cr: 'rc' }
const RELEASE_INDEX = String(QUALIFIERS.indexOf(''))

function stringItem(text: string, followedByDigit: boolean): Item {
  let value = text
  if (followedByDigit && text.length === 1) value = { a: 'alpha', b: 'beta', m: 'milestone' }[text] ?? text
  return { kind: 'str', value: ALIASES[value] ?? value }
}

// Unknown qualifiers sort after the known ones, lexically among themselves (as Maven does).
function qualifierKey(value: string): string {
  const index = QUALIFIERS.indexOf(value)
  return index === -1 ? `${QUALIFIERS.length}-${value}` : String(index)
}

const parseItem = (isDigit: boolean, text: string): Item =>
  isDigit ? { kind: 'int', value: BigInt(text) } : stringItem(text, false)

function isNull(item: Item): boolean {
  if (item.kind === 'int') return item.value === 0n
  if (item.kind === 'str') return qualifierKey(item.value) === RELEASE_INDEX
  return item.items.length === 0
}

function normalize(list: Item[]): void {
  for (let i = list.length - 1; i >= 0; i--) {
    if (isNull(list[i])) list.splice(i, 1)
    else if (list[i].kind !== 'list') break
  }
}

/**
 * Parses any text into Maven's item tree (every string is a Maven version).
 * @example parseMaven('1.0-SNAPSHOT')
 */
function parseMaven(version: string): Item {
  const text = version.toLowerCase()
  const root: Item[] = []
  let list = root
  const stack: Item[][] = [root]
  let isDigit = false
  let start = 0
  const push = () => {
    const next: Item[] = []
    list.push({ kind: 'list', items: next })
    list = next
    stack.push(next)
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '.' || c === '-') {
      list.push(i === start ? { kind: 'int', value: 0n } : parseItem(isDigit, text.slice(start, i)))
      start = i + 1
      if (c === '-') push()
    } else if (c >= '0' && c <= '9') {
      if (!isDigit && i > start) {
        list.push(stringItem(text.slice(start, i), true))
        start = i
        push()
      }
      isDigit = true
    } else {
      if (isDigit && i > start) {
        list.push(parseItem(true, text.slice(start, i)))
        start = i
        push()
      }
      isDigit = false
    }
  }
  if (text.length > start) list.push(parseItem(isDigit, text.slice(start)))
  while (stack.length) normalize(stack.pop()!)
  return { kind: 'list', items: root }
}

function compareItem(a: Item, b: Item | undefined): number {
  if (a.kind === 'int') {
    if (!b) return a.value === 0n ? 0 : 1
    if (b.kind === 'int') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0
    return 1
  }
  if (a.kind === 'str') {
    if (!b) return Math.sign(qualifierKey(a.value).localeCompare(RELEASE_INDEX, 'en'))
    if (b.kind === 'int' || b.kind === 'list') return -1
    const [x, y] = [qualifierKey(a.value), qualifierKey(b.value)]
    return x < y ? -1 : x > y ? 1 : 0
  }
  if (!b) return a.items.length === 0 ? 0 : compareItem(a.items[0], undefined)
  if (b.kind === 'int') return -1
  if (b.kind === 'str') return 1
  for (let i = 0; i < Math.max(a.items.length, b.items.length); i++) {
    const [l, r] = [a.items[i], b.items[i]]
    const result = l === undefined ? (r === undefined ? 0 : -compareItem(r, undefined)) : compareItem(l, r)
    if (result !== 0) return result
  }
  return 0
}

/**
 * Maven ordering of two version strings.
 * @example compareMaven('1.0-alpha-1', '1.0') // -1
 */
export function compareMaven(a: string, b: string): number {
  return compareItem(parseMaven(a), parseMaven(b))
}

/** Maven has no pre-release notion in range membership; SNAPSHOTs are the closest, and count. */
export function isMavenSnapshot(version: string): boolean {
  return /-SNAPSHOT$/i.test(version)
}
