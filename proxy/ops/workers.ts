/**
 * The extra API-server processes of WORKERS above 1. A worker that exits by itself (a crash, an
 * out-of-memory kill, an operator's stray `kill`) is logged and started again, so the gateway keeps the
 * capacity it was configured with: after one second when it had run a minute or more, otherwise after
 * twice the previous wait, up to a minute, so a worker that cannot start does not spin. Until then the
 * other processes serve the shared port and scrapes sum the processes that are running.
 */
import type { Subprocess } from 'bun'
import { log } from '../core/log.ts'
import type { MetricsMessage } from './worker-metrics.ts'

/** The wait before the first restart, and after any worker that ran at least `STEADY_MS`. */
const FIRST_WAIT_MS = 1_000
const LONGEST_WAIT_MS = 60_000
/** A worker that ran this long counts as healthy: its next restart waits `FIRST_WAIT_MS` again. */
const STEADY_MS = 60_000

export type WorkerCommand = {
  /** The command line of one worker. */
  argv: string[]
  env: Record<string, string | undefined>
  onMessage: (message: MetricsMessage, worker: Subprocess) => void
}

export class Workers {
  /** The workers running now (a scrape asks each of them). */
  readonly running: Subprocess[] = []
  private stopping = false
  private wait = FIRST_WAIT_MS
  private restarts = new Set<Timer>()

  constructor(
    private readonly command: WorkerCommand,
    /** WORKERS, for the log: the first process and its workers. */
    private readonly configured: number,
  ) {}

  start(count: number): void {
    for (let index = 0; index < count; index++) this.spawn()
  }

  /** Stops restarting and sends every worker SIGTERM; resolves once all have exited. */
  async stop(): Promise<void> {
    this.stopping = true
    for (const timer of this.restarts) clearTimeout(timer)
    this.restarts.clear()
    for (const worker of this.running) worker.kill('SIGTERM')
    await Promise.all(this.running.map((worker) => worker.exited))
  }

  private spawn(): Subprocess {
    const worker = Bun.spawn(this.command.argv, {
      stdout: 'inherit',
      stderr: 'inherit',
      env: this.command.env,
      ipc: this.command.onMessage,
    })
    const startedAt = Date.now()
    this.running.push(worker)
    void worker.exited.then((code) => {
      if (this.stopping) return
      // Left out of metrics scrapes from now on, which would otherwise wait for it every time.
      this.running.splice(this.running.indexOf(worker), 1)
      this.wait = Date.now() - startedAt >= STEADY_MS ? FIRST_WAIT_MS : this.wait
      const waitMs = this.wait
      this.wait = Math.min(LONGEST_WAIT_MS, this.wait * 2)
      log.error('an API worker process exited; the others go on serving, and it is started again', {
        pid: worker.pid,
        code,
        signal: worker.signalCode,
        processes: this.running.length + 1,
        WORKERS: this.configured,
        restartInMs: waitMs,
      })
      const timer = setTimeout(() => {
        this.restarts.delete(timer)
        if (this.stopping) return
        const replacement = this.spawn()
        log.info('an API worker process started again', {
          pid: replacement.pid,
          processes: this.running.length + 1,
        })
      }, waitMs)
      this.restarts.add(timer)
    })
    return worker
  }
}
