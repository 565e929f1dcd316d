/**
 * `bun run bench:bundle`: builds the dashboard and reports what a browser downloads, gzipped: the first
 * load (index.html, the entry and what it preloads, its stylesheet) and, per page, the chunks that page
 * adds on its first visit (its own chunk and whatever it imports that the first load did not bring, with
 * their stylesheets; libraries a page loads on demand, such as SIWE on sign-in, are listed apart).
 */
import { join } from 'node:path'

type Chunk = {
  file: string
  src?: string
  imports?: string[]
  dynamicImports?: string[]
  css?: string[]
  isEntry?: boolean
}

const root = join(import.meta.dir, '..')
const dist = join(root, 'dashboard', 'dist')

if (!process.argv.includes('--no-build')) {
  const build = Bun.spawnSync(['bun', 'x', 'vite', 'build', 'dashboard', '--logLevel', 'error'], {
    cwd: root,
    stderr: 'inherit',
  })
  if (build.exitCode !== 0) process.exit(build.exitCode ?? 1)
}

const manifest = (await Bun.file(join(dist, '.vite', 'manifest.json')).json()) as Record<
  string,
  Chunk
>
const gzipped = async (file: string) =>
  Bun.gzipSync(new Uint8Array(await Bun.file(join(dist, file)).arrayBuffer())).length

/** The files a chunk brings with its static imports (not its dynamic ones), stylesheets included. */
function closure(key: string, into = new Set<string>()): Set<string> {
  const chunk = manifest[key]!
  if (into.has(chunk.file)) return into
  into.add(chunk.file)
  for (const css of chunk.css ?? []) into.add(css)
  for (const imported of chunk.imports ?? []) closure(imported, into)
  return into
}

const sum = async (files: Iterable<string>) => {
  let total = 0
  for (const file of files) total += await gzipped(file)
  return total
}
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`

const first = closure('index.html')
const firstBytes = (await sum(first)) + (await gzipped('index.html'))
const rows: string[] = [
  `| first load (HTML, entry, Solid and the router, styles) | ${kb(firstBytes)} |`,
]
for (const [key, chunk] of Object.entries(manifest)) {
  if (!key.startsWith('src/pages/')) continue
  const added = [...closure(key)].filter((file) => !first.has(file))
  const onDemand = (chunk.dynamicImports ?? []).map(
    (imported) =>
      `${manifest[imported]!.file.replace(/^assets\//, '').replace(/-[\w-]{8}\.js$/, '')}`,
  )
  const note = onDemand.length
    ? ` (+ ${onDemand.join(', ')} on demand: ${kb(await sum(chunk.dynamicImports!.flatMap((imported) => [...closure(imported)].filter((file) => !first.has(file)))))})`
    : ''
  rows.push(
    `| ${key.replace('src/pages/', '').replace('.tsx', '')} page | +${kb(await sum(added))}${note} |`,
  )
}
console.log(`| Dashboard, gzipped | Size |\n|---|---|\n${rows.join('\n')}`)
