import { rm } from 'node:fs/promises'
import { npmClient } from '../../test/registry/npm-cli'
import { apiClient } from '../../test/support/server'
import type { Cluster } from './cluster'
import type { SoakReceiver } from './receiver'
import { FIREWALLS, INSTALLS, NS, type SoakWebhook } from './setup'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]

/** What the producer did, by operation and outcome (HTTP status, `network` = process died under it). */
export interface ProducerStats {
  ops: Record<string, Record<string, number>>
  installs: Record<string, Record<string, number>>
}

/**
 * Keeps the service busy until `stop()`: config changes (rule upserts and deletes on both
 * firewalls, team changes, test sends, secret rotations) through a random live process, and
 * `npm install`s through the proxy of a random process (allowed, log-only, blocked packages).
 */
export class Producer {
  readonly stats: ProducerStats = { ops: {}, installs: {} }
  /** Installs the firewall decided wrongly (a blocked package installed, or an allowed one refused). */
  readonly wrongDecisions: string[] = []
  private running = false
  private loops: Promise<void>[] = []
  private teams: string[] = []

  constructor(
    private readonly cluster: Cluster,
    private readonly token: string,
    private readonly webhooks: SoakWebhook[],
    private readonly receiver: SoakReceiver,
  ) {}

  start(): void {
    this.running = true
    this.loops = [this.configLoop(), this.installLoop()]
  }

  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.loops)
  }

  private count(table: Record<string, Record<string, number>>, op: string, outcome: string): void {
    table[op] ??= {}
    table[op][outcome] = (table[op][outcome] ?? 0) + 1
  }

  private async call(
    op: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any } | null> {
    try {
      const api = apiClient(await this.cluster.pickUrl(), this.token)
      const response = await api(method, path, body)
      this.count(this.stats.ops, op, String(response.status))
      return response
    } catch {
      this.count(this.stats.ops, op, 'network')
      return null
    }
  }

  private async configLoop(): Promise<void> {
    while (this.running) {
      await this.oneChange()
      await sleep(150 + Math.random() * 450)
    }
  }

  private async oneChange(): Promise<void> {
    const fw = pick(FIREWALLS)
    const k = Math.floor(Math.random() * 5)
    const r = Math.random()
    if (r < 0.4) {
      const rule = {
        id: `churn-${k}`,
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: [`soak-never-${k}-*`] } },
        description: `churn ${Date.now()}`,
      }
      await this.call('rule.upsert', 'PUT', `/v1/${NS}/config/${fw}/rules/churn-${k}`, rule)
    } else if (r < 0.5) {
      await this.call('rule.delete', 'DELETE', `/v1/${NS}/config/${fw}/rules/churn-${k}`)
    } else if (r < 0.65 || this.teams.length === 0) {
      const created = await this.call('team.create', 'POST', `/v1/${NS}/teams`, {
        name: `soak team ${Date.now()}`,
        permissions: ['ns:audit:read'],
      })
      if (created?.status === 201) this.teams.push(created.body.id)
    } else if (r < 0.75) {
      await this.call('team.update', 'PUT', `/v1/${NS}/teams/${pick(this.teams)}`, {
        name: `renamed ${Date.now()}`,
        permissions: [],
      })
    } else if (r < 0.83) {
      await this.call('team.member.add', 'POST', `/v1/${NS}/teams/${pick(this.teams)}/members`, { userId: 'owner' })
    } else if (r < 0.9) {
      const team = this.teams.splice(Math.floor(Math.random() * this.teams.length), 1)[0]
      await this.call('team.delete', 'DELETE', `/v1/${NS}/teams/${team}`)
    } else if (r < 0.97) {
      await this.call('webhook.test', 'POST', `/v1/${NS}/webhooks/${pick(this.webhooks).id}/test`, {})
    } else {
      const hook = pick(this.webhooks)
      const rotated = await this.call(
        'webhook.secret.rotate',
        'POST',
        `/v1/${NS}/webhooks/${hook.id}/secret/rotate`,
        {},
      )
      if (rotated?.status === 200) this.receiver.addSecret(hook.name, rotated.body.secret)
    }
  }

  private async installLoop(): Promise<void> {
    while (this.running) {
      const install = pick(INSTALLS)
      const fw = pick(FIREWALLS)
      let client: ReturnType<typeof npmClient> | null = null
      try {
        // A fresh cache per install, so every install fetches its tarballs (the download decision).
        client = npmClient(`${await this.cluster.pickUrl()}/registry/${NS}/${fw}/`, this.token)
        const result = await client.npm(['install', install.spec])
        const outcome = result.code === 0 ? 'installed' : /\b403\b/.test(result.output) ? 'blocked' : 'failed'
        // `failed` = the process died under npm (chaos); the other outcome is a firewall error.
        const wrong = outcome !== 'failed' && outcome !== install.expect
        if (wrong) this.wrongDecisions.push(`${install.spec} through ${fw}: ${outcome}, expected ${install.expect}`)
        this.count(this.stats.installs, `${install.spec}@${fw}`, wrong ? `${outcome} (WRONG)` : outcome)
      } catch {
        this.count(this.stats.installs, `${install.spec}@${fw}`, 'error')
      } finally {
        if (client) await rm(client.dir, { recursive: true, force: true }).catch(() => undefined)
      }
      await sleep(200 + Math.random() * 800)
    }
  }
}
