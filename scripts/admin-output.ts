/**
 * How admin commands answer: human text by default, or with `--json` exactly one JSON document on
 * stdout (for scripts; errors stay on stderr either way). Each command builds its result as
 * data once and names both renderings here, so the two never drift apart.
 */
export interface Output {
  json: boolean
  /** Writes `text` (a line or lines), or `data` as JSON when `--json` was given. */
  result(text: string, data: unknown): void
  /** A complaint on stderr: `{"error": ...}` with `--json`, the text otherwise. */
  error(text: string): void
}

export function output(json: boolean): Output {
  return {
    json,
    result: (text, data) =>
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : text.endsWith('\n') ? text : `${text}\n`),
    error: (text) => process.stderr.write(json ? `${JSON.stringify({ error: text })}\n` : `${text}\n`),
  }
}

/** One admin command: its usage line, what it does, its options, and how it runs. */
export interface Command {
  usage: string
  summary: string
  options: [string, string][]
  run(values: Record<string, string | boolean | undefined>, positionals: string[], out: Output): Promise<number>
}

const JSON_OPTION: [string, string] = ['--json', 'print the result as one JSON document']

/** `npm run admin -- <command> --help`. */
export function commandHelp(command: Command): string {
  const options = [...command.options, JSON_OPTION]
  const width = Math.max(...options.map(([flag]) => flag.length))
  return [
    `usage: npm run admin -- ${command.usage}`,
    '',
    command.summary,
    '',
    'options:',
    ...options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
    `  ${'--help'.padEnd(width)}  this text`,
    '',
  ].join('\n')
}

/** `npm run admin -- --help`: every command with its first summary line. */
export function overallHelp(commands: ReadonlyMap<string, Command>): string {
  const width = Math.max(...[...commands.keys()].map((name) => name.length))
  return [
    'usage: npm run admin -- <command> [options]',
    '',
    'Works on the same storage as the service (same DATA_DIR / REDIS_URL / REDIS_CLUSTER_NODES and SECRETS_KEY),',
    'also while it runs. Every command takes --json (one JSON document on stdout) and --help.',
    '',
    'commands:',
    ...[...commands].map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary.split('\n')[0]}`),
    '',
    "Run 'npm run admin -- <command> --help' for a command's options.",
    '',
  ].join('\n')
}
