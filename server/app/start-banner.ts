import { existsSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import type { AppConfig } from './config'

/**
 * What an operator needs right after `npm start`: where the dashboard is, where the first token
 * is, and the two commands to try next. Pure, so the text is tested without a server.
 */
export function startBanner(config: AppConfig, port: number): string {
  const origin = config.dashboardUrl ?? config.publicBaseUrl ?? `http://localhost:${port}`
  const ns = config.bootstrap.namespace
  const file = join(resolve(config.dataDir), 'bootstrap-token')
  const shownFile = relative(process.cwd(), file).startsWith('..') ? file : `./${relative(process.cwd(), file)}`
  const tokenHere = existsSync(file)
  const token = tokenHere ? `$(cat ${shownFile})` : '$TOKEN'
  return [
    '',
    `Package firewall ready (storage: ${config.redisClusterNodes ? 'Redis Cluster' : config.redisUrl ? 'Redis' : config.dataDir}).`,
    `  Dashboard  ${origin}/  (sign in with an access token)`,
    tokenHere
      ? `  Token      the owner's token is in ${shownFile}`
      : `  Token      the owner's token is BOOTSTRAP_TOKEN, or one printed by npm run admin -- create-namespace`,
    `  Next       curl -H "Authorization: Bearer ${token}" ${origin}/v1/${ns}/config`,
    `             npm run admin -- create-user --namespace ${ns} --user alice`,
    '',
  ].join('\n')
}
