import { Redis } from 'ioredis'

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
  const monitor = new Redis(url)
  const marking = new Redis(url)
  const commands: string[][] = []
  let counting = false
  const seen = new Map<string, () => void>()
  const lines = await monitor.monitor()
  lines.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0].toLowerCase() === 'echo') seen.get(args[1])?.()
    else if (counting && !source.includes('lua') && keep(args)) commands.push(args)
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
    lines.disconnect()
    monitor.disconnect()
    marking.disconnect()
  }
}
