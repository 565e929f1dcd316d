/** Runs `bun run admin -- <args>` as an operator does, against a server's site, and reads its output. */
import { repositoryRoot as root, runInRepository } from './server-process.ts'

export type CliResult = { code: number; json: Record<string, any>; stderr: string }

export async function runAdminCli(env: Record<string, string>, args: string[]): Promise<CliResult> {
  const { code, stdout, stderr } = await runInRepository(['bun', 'run', 'admin', '--', ...args], {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? root,
    ...env,
  })
  // `bun run` adds its own lines on stderr (the command, the exit code) around the CLI's output.
  const own = stderr
    .split('\n')
    .filter((line) => !line.startsWith('$ ') && !line.startsWith('error: script'))
  return { code, json: stdout.trim() ? JSON.parse(stdout) : {}, stderr: own.join('\n').trim() }
}
