/**
 * Child processes of the benchmark and the undo steps of everything it sets up. Every step registered
 * with `cleanup.add` runs once, newest first, whether the run ends normally, fails or is interrupted;
 * a child still alive when the bench process exits is killed synchronously as a last resort.
 */
import type { Subprocess } from 'bun'
import { closeSync, openSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { UsageError } from './options.ts'

type Step = { name: string; run: () => Promise<void> | void }

const children = new Set<Subprocess>()

/** The undo steps of the run, executed in reverse order by `run()`. */
export const cleanup = {
  steps: [] as Step[],
  running: undefined as Promise<void> | undefined,
  add(name: string, run: Step['run']): void {
    this.steps.push({ name, run })
  },
  /** Runs the steps; a second call (a signal during a normal end) waits for the same run. */
  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run()
        } catch (error) {
          console.error(`cleanup: ${step.name} failed: ${(error as Error).message}`)
        }
      }
    })()
    return this.running
  },
}

process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
})

let interruptedBy: string | undefined

/**
 * Runs a bench command and exits with its status: a usage error prints the usage (2), another failure
 * its message (1); one after an interruption is its consequence and says nothing more.
 */
export function runCommand(main: () => Promise<number>, usage: string): void {
  main().then(
    (code) => process.exit(code),
    (error) => {
      if (interrupted()) return
      const badUsage =
        error instanceof UsageError ||
        String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')
      console.error(
        badUsage
          ? `${(error as Error).message}\n\n${usage}`
          : `Benchmark failed: ${error instanceof Error ? error.message : String(error)}`,
      )
      process.exit(badUsage ? 2 : 1)
    },
  )
}

/** The signal that interrupted the run, if one did: failures after it are its consequence, not news. */
export function interrupted(): string | undefined {
  return interruptedBy
}

/** Runs the cleanup steps on Ctrl-C or SIGTERM, then exits with the conventional status. */
export function cleanUpOnSignals(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (interruptedBy) return
      interruptedBy = signal
      console.error(`\n${signal}: stopping the benchmark and its processes…`)
      for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
      void cleanup.run().finally(() => process.exit(code))
    })
  }
}

/** Spawns a child whose stdout and stderr go to one file; it is stopped (SIGTERM, then SIGKILL) at cleanup. */
export function spawnChild(
  name: string,
  cmd: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; logFile: string },
): Subprocess {
  const log = openSync(options.logFile, 'a')
  const child = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: options.env,
    stdin: 'ignore',
    stdout: log,
    stderr: log,
  })
  closeSync(log)
  children.add(child)
  cleanup.add(`stop ${name}`, () => stopChild(child))
  return child
}

/**
 * Runs a command to its end and returns what it printed and the CPU seconds it used; killed with the
 * bench if interrupted.
 */
export async function capture(
  cmd: string[],
): Promise<{ stdout: string; stderr: string; exitCode: number; cpuS: number }> {
  const child = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  children.add(child)
  try {
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    const cpuS = Number(child.resourceUsage()?.cpuTime.total ?? 0) / 1e6
    return { stdout, stderr, exitCode, cpuS }
  } finally {
    children.delete(child)
  }
}

/** SIGTERM, and SIGKILL if the child has not exited within the grace period. */
export async function stopChild(child: Subprocess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const exited = await Promise.race([
    child.exited.then(() => true),
    Bun.sleep(graceMs).then(() => false),
  ])
  if (!exited) {
    child.kill('SIGKILL')
    await child.exited
  }
  children.delete(child)
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}

/** Polls `url` until it answers 200; fails early if `child` exits, and after `timeoutMs`. */
export async function waitForHttp(
  url: string,
  child: Subprocess,
  timeoutMs: number,
  describeFailure: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(
        `the process exited with status ${child.exitCode} before ${url} answered\n${await describeFailure()}`,
      )
    try {
      const response = await fetch(url)
      await response.arrayBuffer()
      if (response.ok) return
    } catch {
      // Not listening yet.
    }
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s\n${await describeFailure()}`)
}

/** The last lines of a log file, for error messages. */
export async function tail(path: string, lines = 20): Promise<string> {
  const file = Bun.file(path)
  if (!(await file.exists())) return ''
  return (await file.text()).trimEnd().split('\n').slice(-lines).join('\n')
}

/** Starts one of the bench's own servers as a process and waits until it answers GET /health. */
export async function startService(
  name: string,
  script: string,
  args: string[],
  scratchDir: string,
  extraEnv: Record<string, string> = {},
): Promise<{ origin: string; pid: number }> {
  const port = await freePort()
  const logFile = join(scratchDir, `${name}.log`)
  // Bun's fetch keeps 256 requests in flight unless told otherwise; the gateway runs with it raised.
  const env = { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '65535', ...extraEnv }
  const child = spawnChild(
    name,
    [process.execPath, join(import.meta.dir, script), String(port), ...args],
    { logFile, env },
  )
  const origin = `http://127.0.0.1:${port}`
  await waitForHttp(`${origin}/health`, child, 15_000, async () => tail(logFile))
  return { origin, pid: child.pid }
}
