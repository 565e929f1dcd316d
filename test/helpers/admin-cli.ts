/** Runs `bun run admin -- <args>` as an operator does, against a server's site, and reads its output. */
import { repositoryRoot as root } from './server-process.ts'

export type CliResult = { code: number; json: Record<string, any>; stderr: string }

export async function runAdminCli(env: Record<string, string>, args: string[]): Promise<CliResult> {
  const child = Bun.spawn(['bun', 'run', 'admin', '--', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? root, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  // `bun run` adds its own lines on stderr (the command, the exit code) around the CLI's output.
  const own = stderr
    .split('\n')
    .filter((line) => !line.startsWith('$ ') && !line.startsWith('error: script'))
  return { code, json: stdout.trim() ? JSON.parse(stdout) : {}, stderr: own.join('\n').trim() }
}
