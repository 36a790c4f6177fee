import { connect, type Socket } from 'node:net'
import { Redis } from 'ioredis'

/** One command a Redis ran, as MONITOR shows it: its arguments and its source (`lua` inside a script). */
export interface MonitoredCommand {
  args: string[]
  source: string
}

/**
 * The arguments of a MONITOR line (`+1795900872.262814 [0 127.0.0.1:48574] "set" "k" "v"`), each
 * unquoted as Redis quotes it (`\"`, `\\`, `\n`, `\r`, `\t`, `\a`, `\b`, `\xHH`).
 */
function monitorLine(line: string): MonitoredCommand | null {
  const head = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line)
  if (!head) return null
  const args = [...line.slice(head[0].length).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(([, quoted]) =>
    quoted.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, escape: string) => {
      if (escape.length === 3) return String.fromCharCode(parseInt(escape.slice(1), 16))
      return { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' }[escape] ?? escape
    }),
  )
  return { args, source: head[1] }
}

/** A command as a RESP array: an inline command would split a password with a space or a quote in it. */
function command(args: string[]): string {
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`
}

/**
 * A MONITOR connection of its own, read off the socket. (ioredis's `monitor()` switches to
 * monitoring a microtask after MONITOR's `+OK`: a command another client sent at that moment,
 * read in the same chunk, failed the test with "Command queue state error".)
 */
export async function openMonitor(url: string, onCommand: (command: MonitoredCommand) => void): Promise<Socket> {
  const { hostname, port, password, username } = new URL(url)
  const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) })
  socket.setEncoding('latin1')
  let pending = ''
  let started!: () => void
  let failed!: (error: Error) => void
  const ready = new Promise<void>((resolve, reject) => ([started, failed] = [resolve, reject]))
  let okReplies = 0
  const expectedOks = password ? 2 : 1
  socket.on('error', (error) => failed(error))
  socket.on('data', (chunk: string) => {
    pending += chunk
    let end = pending.indexOf('\r\n')
    for (; end >= 0; end = pending.indexOf('\r\n')) {
      const line = pending.slice(0, end)
      pending = pending.slice(end + 2)
      if (line.startsWith('-')) failed(new Error(`MONITOR refused: ${line.slice(1)}`))
      else if (line === '+OK' && okReplies < expectedOks) {
        okReplies += 1
        if (okReplies === expectedOks) started()
      } else {
        const command = monitorLine(line)
        if (command) onCommand(command)
      }
    }
  })
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const user = decodeURIComponent(username)
  if (password) socket.write(command(['AUTH', ...(user ? [user] : []), decodeURIComponent(password)]))
  socket.write(command(['MONITOR']))
  await ready
  return socket
}

/**
 * The top-level commands a Redis ran while `run` ran (MONITOR between two ECHO markers; commands
 * scripts issue are left out), those `keep` accepts. `marker`: a prefix for the markers' text, so
 * that another client's ECHO on a shared Redis is never taken for one.
 * @example const commands = await commandsDuring(url, () => client.get('x'))
 */
export async function commandsDuring(
  url: string,
  run: () => Promise<void>,
  keep: (args: string[]) => boolean = () => true,
  marker = '',
): Promise<string[][]> {
  const marking = new Redis(url)
  const commands: string[][] = []
  let counting = false
  const seen = new Map<string, () => void>()
  const monitor = await openMonitor(url, ({ args, source }) => {
    if (args[0]?.toLowerCase() === 'echo') seen.get(args[1])?.()
    else if (counting && source !== 'lua' && keep(args)) commands.push(args)
  })
  const mark = async (name: string) => {
    const shown = new Promise<void>((resolve) => seen.set(`${marker}${name}`, resolve))
    await marking.echo(`${marker}${name}`)
    await shown
  }
  try {
    await mark('from')
    counting = true
    await run()
    await mark('to')
    return commands
  } finally {
    monitor.destroy()
    marking.disconnect()
  }
}
