import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../../test/support/server'
import { probeArgs, sampleRetained } from '../memory/probe-client'
import type { RetainedSample } from '../memory/trend'

/** One post-GC reading of a server process (retained heap and RSS, through the memory probe). */
export type MemorySample = RetainedSample

/** One OS process that served a slot, from spawn to exit. */
export interface Instance {
  slot: number
  pid: number
  startedAt: number
  readyAt?: number
  exitedAt?: number
  /** True when the soak killed it; an exit without this is a crash. */
  killedBySoak: boolean
  /** The memory witness: never killed, so its retained heap can be followed over the whole run. */
  witness: boolean
  exit?: { code: number | null; signal: NodeJS.Signals | null }
  samples: MemorySample[]
}

interface Slot {
  index: number
  port: number
  url: string
  child: ChildProcess | null
  instance: Instance | null
  ready: boolean
  witness: boolean
  /** Env of this slot over the cluster's. */
  env: Record<string, string>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * N copies of the built server on one Redis, each on a fixed loopback port per slot (a restart
 * reuses it), with their output in `logDir/slot-N.log`. `chaos()` SIGKILLs a random slot every
 * few seconds and restarts it, sparing the memory witness (`addWitness`); `sampleMemory()` records
 * the retained heap (after a full GC, through scripts/memory/probe.mjs) and RSS of every live process.
 */
export class Cluster {
  readonly instances: Instance[] = []
  readonly kills: { at: number; slot: number; pid: number; restartedMs?: number }[] = []
  /** Restarts that failed (the process did not come back). */
  readonly errors: string[] = []
  private slots: Slot[] = []
  private chaosRunning = false
  private chaosDone: Promise<void> = Promise.resolve()

  constructor(
    private readonly entry: string,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {}

  async start(count: number): Promise<void> {
    for (let index = 0; index < count; index++) {
      const port = await freePort()
      this.slots.push(this.slot(index, port, false, {}))
    }
    // The first process bootstraps the namespace alone; the others join an initialised storage.
    await this.launch(this.slots[0])
    await Promise.all(this.slots.slice(1).map((slot) => this.launch(slot)))
  }

  private slot(index: number, port: number, witness: boolean, env: Record<string, string>): Slot {
    return { index, port, url: `http://127.0.0.1:${port}`, child: null, instance: null, ready: false, witness, env }
  }

  /**
   * One more process, never killed: the memory witness, whose retained heap is followed for the whole
   * run (a killed process lives a minute or two, mostly warm-up). It serves API calls and installs like
   * the others. Started after the webhooks exist and with a long lease (`env`), so it rarely holds a
   * webhook: the chaos would have to spare that webhook's sender.
   */
  async addWitness(env: Record<string, string>): Promise<number> {
    const slot = this.slot(this.slots.length, await freePort(), true, env)
    this.slots.push(slot)
    await this.launch(slot)
    return slot.index
  }

  /** Slots the chaos may kill (all but the witness). */
  killable(index: number): boolean {
    return this.slots[index] !== undefined && !this.slots[index].witness
  }

  /** URLs of the processes that answer now. */
  liveUrls(): string[] {
    return this.slots.filter((slot) => slot.ready).map((slot) => slot.url)
  }

  /** A random live process, waiting briefly when all are restarting. */
  async pickUrl(): Promise<string> {
    for (let i = 0; i < 200; i++) {
      const live = this.liveUrls()
      if (live.length) return live[Math.floor(Math.random() * live.length)]
      await sleep(50)
    }
    throw new Error('no server process is ready')
  }

  /** Exits the soak did not cause (crashes). */
  crashes(): Instance[] {
    return this.instances.filter((instance) => instance.exit && !instance.killedBySoak)
  }

  private async launch(slot: Slot): Promise<void> {
    const log = createWriteStream(join(this.logDir, `slot-${slot.index}.log`), { flags: 'a' })
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...this.env,
      ...slot.env,
      PORT: String(slot.port),
      NITRO_PORT: String(slot.port),
      HOST: '127.0.0.1',
      NITRO_HOST: '127.0.0.1',
    }
    const child = spawn(process.execPath, [...probeArgs(), this.entry], {
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    })
    const instance: Instance = {
      slot: slot.index,
      pid: child.pid!,
      startedAt: Date.now(),
      killedBySoak: false,
      witness: slot.witness,
      samples: [],
    }
    log.write(`--- pid ${child.pid} started ${new Date().toISOString()}\n`)
    child.stdout!.pipe(log, { end: false })
    child.stderr!.pipe(log, { end: false })
    this.instances.push(instance)
    Object.assign(slot, { child, instance, ready: false })
    child.once('exit', (code, signal) => {
      instance.exitedAt = Date.now()
      instance.exit = { code, signal }
      log.end(`--- pid ${child.pid} exited code=${code} signal=${signal} ${new Date().toISOString()}\n`)
      if (slot.child === child) slot.ready = false
    })
    const deadline = Date.now() + 60_000
    for (;;) {
      if (instance.exit)
        throw new Error(`server slot ${slot.index} exited while starting (see ${this.logDir}/slot-${slot.index}.log)`)
      try {
        if ((await fetch(`${slot.url}/readyz`, { signal: AbortSignal.timeout(2_000) })).ok) break
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`server slot ${slot.index} not ready within 60 s`)
      await sleep(100)
    }
    instance.readyAt = Date.now()
    slot.ready = true
  }

  /** SIGKILLs one slot's process and starts a new one on the same port. */
  async killAndRestart(index: number): Promise<void> {
    const slot = this.slots[index]
    if (!slot.child || !slot.instance || slot.instance.exit || slot.witness) return
    const child = slot.child
    const kill = { at: Date.now(), slot: index, pid: child.pid!, restartedMs: undefined as number | undefined }
    slot.ready = false
    slot.instance.killedBySoak = true
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
    this.kills.push(kill)
    await this.launch(slot)
    kill.restartedMs = Date.now() - kill.at
  }

  /** The slot whose current process has this pid. */
  slotOfPid(pid: number): number | null {
    return this.slots.find((slot) => slot.instance?.pid === pid && !slot.instance.exit)?.index ?? null
  }

  /** Kills a process every `minMs..maxMs` until `stopChaos()`: `pickSlot`'s choice, else a random one. */
  chaos(
    minMs: number,
    maxMs: number,
    onKill?: (slot: number, why: string) => void,
    pickSlot?: () => Promise<{ slot: number; why: string } | null>,
  ): void {
    if (minMs <= 0) return
    this.chaosRunning = true
    this.chaosDone = (async () => {
      while (this.chaosRunning) {
        const wait = minMs + Math.random() * (maxMs - minMs)
        const until = Date.now() + wait
        while (this.chaosRunning && Date.now() < until) await sleep(Math.min(250, until - Date.now()))
        if (!this.chaosRunning) break
        const picked = await pickSlot?.().catch(() => null)
        const others = this.slots.filter((slot) => !slot.witness)
        const chosen =
          picked && this.killable(picked.slot)
            ? picked
            : {
                slot: others[Math.floor(Math.random() * others.length)].index,
                why: picked ? `random (${picked.why} is the witness)` : 'random',
              }
        if (!this.chaosRunning) break
        const index = chosen.slot
        onKill?.(index, chosen.why)
        await this.killAndRestart(index).catch((error) =>
          this.errors.push(`restart of slot ${index}: ${(error as Error).message}`),
        )
      }
    })()
  }

  async stopChaos(): Promise<void> {
    this.chaosRunning = false
    await this.chaosDone
  }

  /** Restarts every slot whose process is gone (after a crash) and waits until all answer. */
  async ensureAllUp(): Promise<void> {
    for (const slot of this.slots) if (!slot.ready && slot.instance?.exit) await this.launch(slot)
  }

  /** Retained heap (after a full GC) and RSS of every ready process, one after the other (each GC pauses its process). */
  async sampleMemory(): Promise<void> {
    for (const slot of this.slots.filter((slot) => slot.ready && slot.instance && slot.child)) {
      const instance = slot.instance!
      const sample = await sampleRetained(slot.child!).catch(() => null)
      if (sample && !instance.exit) instance.samples.push(sample)
    }
  }

  /** SIGTERM everything (graceful), SIGKILL what is left after 15 s. */
  async stop(): Promise<void> {
    await this.stopChaos()
    await Promise.all(
      this.slots.map(async (slot) => {
        const child = slot.child
        if (!child || slot.instance?.exit) return
        slot.instance!.killedBySoak = true
        slot.ready = false
        const exited = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
        await exited
        clearTimeout(timer)
      }),
    )
  }
}
