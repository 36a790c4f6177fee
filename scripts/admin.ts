/**
 * Admin CLI on the same storage as the service (same env). `npm run admin -- --help` lists the
 * commands, `<command> --help` shows one; every command takes `--json`.
 *   npm run admin -- create-namespace --namespace <ns> --user <id>
 *   npm run admin -- create-user --namespace <ns> --user <id>
 *   npm run admin -- list-users --namespace <ns>
 *   npm run admin -- grant --namespace <ns> --permission <p> --firewall <fw> --user <id>
 *   npm run admin -- revoke-token --namespace <ns> --token <tok-id>
 *   npm run admin -- rotate-secrets-key
 *   npm run admin -- advisories sync|status [--ecosystem npm] [--file all.zip]
 * The first two print the new user's first personal token alone on the last line of stdout;
 * rotate-secrets-key re-encrypts every stored secret with SECRETS_KEY and
 * prints the count.
 */
import { parseArgs } from 'node:util'
import { backendOptionsFromEnv, openBackend } from '../storage'
import { createServices } from '../server/app/services'
import { createNamespaceWithOwner, createUser } from '../server/namespace/directory'
import { DomainError } from '../server/common/errors'
import { rotateSecretsKey } from '../storage/secrets/rotate'
import { ADVISORIES_COMMAND } from './admin-advisories'
import { GRANT, LIST_USERS, REVOKE_TOKEN } from './admin-users'
import { commandHelp, output, overallHelp, type Command, type Output } from './admin-output'

const USER_OPTIONS: [string, string][] = [
  ['--namespace <ns>', 'the namespace (an id: letters, digits, ".", "_", "-")'],
  ['--user <id>', 'the user id'],
]

/** create-namespace and create-user: the new user's first personal token, alone on the last line. */
function userCommand(kind: 'create-namespace' | 'create-user'): Command {
  return {
    usage: `${kind} --namespace <ns> --user <id> [--json]`,
    summary:
      kind === 'create-namespace'
        ? "Creates a namespace owned by --user and prints the owner's first personal token (fwp_...)."
        : 'Adds --user to the namespace with no permissions yet and prints their first personal token (fwp_...).',
    options: USER_OPTIONS,
    async run(values, _positionals, out) {
      const ns = values.namespace
      const user = values.user
      if (typeof ns !== 'string' || typeof user !== 'string') {
        out.error(`--namespace and --user are required\nusage: npm run admin -- ${this.usage}`)
        return 2
      }
      const services = createServices(await openBackend(backendOptionsFromEnv(process.env)))
      try {
        const token =
          kind === 'create-namespace'
            ? await createNamespaceWithOwner(services, ns, user)
            : await createUser(services, ns, user)
        out.result(`${kind === 'create-namespace' ? 'namespace' : 'user'} created; first personal token:\n${token}`, {
          namespace: ns,
          user,
          token,
        })
        return 0
      } catch (error) {
        out.error(error instanceof DomainError ? error.message : String(error))
        return 1
      } finally {
        await services.storage.close()
      }
    },
  }
}

const rotate: Command = {
  usage: 'rotate-secrets-key [--json]',
  summary:
    'Re-encrypts every stored secret with SECRETS_KEY (opening old ones with SECRETS_KEY_PREVIOUS) and prints the count.',
  options: [],
  async run(_values, _positionals, out: Output) {
    // A composition root like the start-up plugin: re-sealing walks storage itself, below the repositories.
    const backend = await openBackend(backendOptionsFromEnv(process.env))
    const { secrets: box } = createServices(backend)
    try {
      const { secrets, records, keyId } = await rotateSecretsKey(backend, box)
      out.result(`re-encrypted ${secrets} secrets in ${records} records with key id ${keyId}\n${secrets}`, {
        secrets,
        records,
        keyId,
      })
      return 0
    } finally {
      await backend.close()
    }
  },
}

const COMMANDS: ReadonlyMap<string, Command> = new Map([
  ['create-namespace', userCommand('create-namespace')],
  ['create-user', userCommand('create-user')],
  ['list-users', LIST_USERS],
  ['grant', GRANT],
  ['revoke-token', REVOKE_TOKEN],
  ['rotate-secrets-key', rotate],
  ['advisories', ADVISORIES_COMMAND],
])

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    // An unknown or malformed option: say which, then how to ask for help (never a stack trace).
    const json = argv.includes('--json')
    output(json).error(`${(error as Error).message}\nRun 'npm run admin -- --help' for the commands and their options.`)
    return 2
  }
  const { positionals, values } = parsed
  const [name] = positionals
  const out = output(values.json === true)
  if (!name || name === 'help') {
    process.stdout.write(overallHelp(COMMANDS))
    return name || values.help ? 0 : 2
  }
  const command = COMMANDS.get(name)
  if (!command) {
    out.error(`unknown command "${name}"\n\n${overallHelp(COMMANDS)}`)
    return 2
  }
  if (values.help) {
    process.stdout.write(commandHelp(command))
    return 0
  }
  return command.run(values, positionals, out)
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      namespace: { type: 'string' },
      user: { type: 'string' },
      ecosystem: { type: 'string' },
      file: { type: 'string' },
      permission: { type: 'string' },
      firewall: { type: 'string' },
      team: { type: 'string' },
      token: { type: 'string' },
      everybody: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    // A malformed SECRETS_KEY or one that does not match storage: the message names the setting, never a key.
    output(process.argv.includes('--json')).error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  },
)
