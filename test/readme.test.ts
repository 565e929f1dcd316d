// The README's first request, run as written: `bun proxy/main.ts` on embedded defaults with the shipped
// catalog, its `bun run admin` commands, its curl and its two SDK snippets (only the ports, the data
// directory, and the account and key the first commands print are this run's). And its catalog examples:
// valid for the catalog's own check, and equal to catalog.yaml where they show a model it has.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildCatalog, loadCatalog } from '../proxy/core/catalog/catalog.ts'
import {
  repositoryRoot,
  runInRepository,
  startServerProcess,
  type ServerProcess,
} from './helpers/server-process.ts'

type Block = { lang: string; code: string }

/** The fenced code blocks of the README between a heading and the next heading. */
async function blocksUnder(heading: string): Promise<Block[]> {
  const readme = await Bun.file(join(repositoryRoot, 'README.md')).text()
  const from = readme.indexOf(`\n${heading}\n`)
  if (from === -1) throw new Error(`README has no "${heading}"`)
  const rest = readme.slice(from + heading.length + 2)
  const next = rest.search(/\n#{1,6} /)
  const section = next === -1 ? rest : rest.slice(0, next)
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({
    lang: match[1]!,
    code: match[2]!,
  }))
}

const README_API = 'http://127.0.0.1:8080'
const DEMO_ANSWER = 'demo/echo, a demo model built into the gateway'

describe('the README', () => {
  let server: ServerProcess
  let dataDir: string
  let env: Record<string, string>
  let blocks: Block[]
  const snippetsDir = join(repositoryRoot, 'test-output', 'readme')

  /** Runs a shell command as a reader would paste it. */
  async function shell(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return runInRepository(['sh', '-c', command], env)
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-readme-'))
    const ports = await Promise.all([0, 1].map(() => freePort()))
    env = {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dataDir,
      DATA_DIR: dataDir,
      PORT: String(ports[0]),
      SITE_PORT: String(ports[1]),
      LOG_LEVEL: 'info',
    }
    server = await startServerProcess(env)
    blocks = await blocksUnder('## First request')
    await mkdir(snippetsDir, { recursive: true })
  })
  afterAll(async () => {
    server?.process.kill('SIGTERM')
    await server?.process.exited
    await rm(dataDir, { recursive: true, force: true })
  })

  test('first request: the admin commands, curl and both SDK snippets get demo/echo answers', async () => {
    expect(blocks.map((block) => block.lang)).toEqual(['sh', 'sh', 'ts', 'ts'])
    const [commands, curl, openai, anthropic] = blocks as [Block, Block, Block, Block]
    const [createAccount, createKey] = commands.code.trim().split('\n') as [string, string]

    const account = await shell(createAccount)
    expect(account.code).toBe(0)
    const { accountId } = JSON.parse(account.stdout) as { accountId: string }
    const created = await shell(createKey.replace('acct_…', accountId))
    expect(created.code).toBe(0)
    const { key } = JSON.parse(created.stdout) as { key: string }
    const ours = (code: string) =>
      code.replaceAll(README_API, server.apiUrl).replaceAll('svc-live-…', key)

    const answered = await shell(ours(curl.code))
    expect(answered.code).toBe(0)
    const answer = JSON.parse(answered.stdout) as {
      choices: { message: { content: string } }[]
      usage: { cost: number }
    }
    expect(answer.choices[0]!.message.content).toContain(DEMO_ANSWER)
    expect(answer.usage.cost).toBe(0)

    for (const [index, snippet] of [openai, anthropic].entries()) {
      const file = join(snippetsDir, `snippet-${index}.ts`)
      await Bun.write(file, ours(snippet.code))
      const ran = await shell(`bun ${file}`)
      expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' })
      // Not streamed, then streamed (the OpenAI snippet); the answers say they are the demo's.
      expect(ran.stdout.split(DEMO_ANSWER).length - 1).toBe(index === 0 ? 2 : 1)
    }
  })

  test('catalog examples: valid as they stand, and the hosted models as catalog.yaml has them', async () => {
    const examples = (await blocksUnder('### Adding providers and models')).filter(
      (block) => block.lang === 'yaml',
    )
    expect(examples).toHaveLength(2)
    const shipped = await loadCatalog(join(repositoryRoot, 'catalog.yaml'), {})
    for (const example of examples) {
      const catalog = buildCatalog(Bun.YAML.parse(example.code), {})
      for (const [id, model] of catalog.models) {
        const known = shipped.models.get(id)
        if (!known) continue
        const { name: _, ...shown } = model
        const { name: __, ...expected } = known
        expect({ ...shown, routes: shown.routes.map((route) => route.upstreamModel) }).toEqual({
          ...expected,
          routes: expected.routes.map((route) => route.upstreamModel),
        })
      }
    }
  })
})

async function freePort(): Promise<number> {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = server.port!
  await server.stop(true)
  return port
}
