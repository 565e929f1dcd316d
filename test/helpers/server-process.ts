/**
 * The gateway as an operator starts it: `bun proxy/main.ts` in its own process, from the repository's
 * root, with the environment a test gives it; ready once it has printed both servers' URLs. The fetch
 * limit is set as `bun run start` sets it, so that the process is the server itself (without it main.ts
 * runs itself again as a child, and a signal to the parent would not reach the server as it is).
 */
import { join } from 'node:path'

export const repositoryRoot = join(import.meta.dir, '..', '..')

/** Runs a command in the repository to its end; its exit code and what it wrote. */
export async function runInRepository(
  command: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(command, {
    cwd: repositoryRoot,
    env,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, stdout, stderr }
}

export type ServerProcess = {
  process: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  apiUrl: string
  siteUrl: string
  output: string[]
}

export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ServerProcess> {
  const child = Bun.spawn(['bun', 'proxy/main.ts'], {
    cwd: repositoryRoot,
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '65535', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const output: string[] = []
  void (async () => {
    for await (const chunk of child.stdout) output.push(new TextDecoder().decode(chunk))
  })()
  const until = Date.now() + timeoutMs
  for (;;) {
    const text = output.join('')
    const api = /API server:\s+(\S+)/.exec(text)
    const site = /Site server:\s+(\S+)/.exec(text)
    if (api && site) return { process: child, apiUrl: api[1]!, siteUrl: site[1]!, output }
    if (child.exitCode !== null || Date.now() > until)
      throw new Error(`server did not start: ${text}${await new Response(child.stderr).text()}`)
    await Bun.sleep(50)
  }
}
