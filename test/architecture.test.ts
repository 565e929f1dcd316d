// The folders show the data flow: imports go one way, from the HTTP routes down through the account
// services and the request pipeline to policy, then providers and stores, and the leaf `core` every layer
// may use. A module of one area imports only from its own area or from a lower layer (type imports
// count: a type a layer shares lives below it). No module is part of an import cycle, in the service or
// in the dashboard.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = join(import.meta.dir, '..')

/** The areas of proxy/, highest first; an area imports only from areas of later rows. */
export const LAYERS: string[][] = [
  ['http'],
  ['accounts', 'ops'],
  ['pipeline'],
  ['policy'],
  ['providers', 'stores'],
  ['core'],
]

/** proxy/main.ts, proxy/app.ts and proxy/app-accounts.ts build the service from every area. */
const COMPOSITION = new Set(['main.ts', 'app.ts', 'app-accounts.ts'])

type Graph = Map<string, string[]>

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory())
      return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(path)
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every relative import of every file (static, dynamic, re-export, type-only), resolved to a file. */
export function importGraph(dir: string): Graph {
  const graph: Graph = new Map()
  const files = sourceFiles(dir)
  const known = new Set(files)
  // Vite-style imports leave the extension out.
  const fileOf = (path: string) =>
    [path, `${path}.ts`, `${path}.tsx`, join(path, 'index.ts'), join(path, 'index.tsx')].find(
      (candidate) => known.has(candidate),
    ) ?? path
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const targets = [
      ...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm),
    ].map((match) => fileOf(resolve(dirname(file), match[1]!)))
    graph.set(file, targets)
  }
  return graph
}

/** The import cycles (strongly connected components of more than one file, or a file importing itself). */
export function cycles(graph: Graph): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!))
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      if (component.length > 1 || graph.get(file)!.includes(file))
        found.push(component.map((path) => relative(root, path)).sort())
    }
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

/** The area of a file under proxy/ (its first folder), or undefined for the composition files. */
function areaOf(file: string): string | undefined {
  const parts = relative(join(root, 'proxy'), file).split('/')
  return parts.length > 1 ? parts[0] : undefined
}

/** Imports from an area into one of the same layer or a higher one. */
export function upwardImports(graph: Graph): string[] {
  const layerOf = new Map(
    LAYERS.flatMap((areas, layer) => areas.map((area) => [area, layer] as const)),
  )
  const problems: string[] = []
  for (const [file, targets] of graph) {
    if (COMPOSITION.has(relative(join(root, 'proxy'), file))) continue
    const from = areaOf(file)
    for (const target of targets) {
      if (!target.startsWith(join(root, 'proxy'))) continue
      const to = areaOf(target)
      if (from === to) continue
      const allowed =
        from !== undefined &&
        to !== undefined &&
        layerOf.has(from) &&
        layerOf.has(to) &&
        layerOf.get(to)! > layerOf.get(from)!
      if (!allowed) problems.push(`${relative(root, file)} → ${relative(root, target)}`)
    }
  }
  return problems
}

describe('the import structure', () => {
  const proxy = importGraph(join(root, 'proxy'))

  test('every folder of proxy/ is one of the areas', () => {
    const areas = new Set([...proxy.keys()].map(areaOf).filter((area) => area !== undefined))
    expect([...areas].sort()).toEqual(LAYERS.flat().sort())
  })

  test('every area says what it holds and what it may import', () => {
    for (const area of LAYERS.flat())
      expect(readFileSync(join(root, 'proxy', area, 'README.md'), 'utf8')).toMatch(
        /^# \w+\n\n[\s\S]+\nImports: /,
      )
  })

  test('proxy/: imports go down the layers, never up or across', () => {
    expect(upwardImports(proxy)).toEqual([])
  })

  test('proxy/: no import cycles', () => {
    expect(cycles(proxy)).toEqual([])
  })

  test('dashboard/: no import cycles', () => {
    expect(cycles(importGraph(join(root, 'dashboard', 'src')))).toEqual([])
  })

  test('the check finds an upward import and a cycle when there is one', () => {
    const fake = (path: string) => join(root, 'proxy', path)
    const graph: Graph = new Map([
      [fake('core/a.ts'), [fake('pipeline/b.ts')]],
      [fake('pipeline/b.ts'), [fake('core/a.ts')]],
      [fake('providers/c.ts'), [fake('stores/d.ts')]],
      [fake('stores/d.ts'), []],
    ])
    expect(upwardImports(graph)).toEqual([
      'proxy/core/a.ts → proxy/pipeline/b.ts',
      'proxy/providers/c.ts → proxy/stores/d.ts',
    ])
    expect(cycles(graph)).toEqual([['proxy/core/a.ts', 'proxy/pipeline/b.ts']])
  })
})
