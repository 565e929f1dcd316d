// A mistake in the catalog file is reported at its place: the file, the line and column where the
// field is written, and the field's path, for each kind of mistake, in real files read from disk.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadCatalog } from '../../../../proxy/core/catalog/catalog.ts'
import { rejection } from '../../../helpers/settle.ts'

const dir = await mkdtemp(join(tmpdir(), 'catalog-file-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

// Block and flow style mixed, as operators write it; each test changes one line.
const valid = `# A catalog for the tests.
providers:
  - { id: demo, style: openai, builtin: echo }
  - { id: p, style: openai, baseUrl: "http://127.0.0.1:1/v1", apiKeyEnv: P_KEY }
models:
  - id: demo/echo
    contextLength: 1000
    maxOutputTokens: 100
    pricing: { inputPerMTok: 0, outputPerMTok: 0 }
    routes: [ { provider: demo, model: echo } ]
  - id: a/first
    contextLength: 1000
    maxOutputTokens: 100
    pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 }
    routes: [ { provider: p, model: first } ]
  - id: a/second
    name: Second
    contextLength: 1000
    maxOutputTokens: 100
    pricing:
      inputPerMTok: 1
      outputPerMTok: 2
    routes:
      - provider: p
        model: second
auto:
  - { id: service/auto, candidates: [a/first, a/second] }
images:
  - id: a/image
    routes: [ { provider: p, model: image } ]
    defaultSize: 1024x1024
    defaultQuality: standard
    prices:
      1024x1024/standard: 0.04
      1024x1024/hd: 0.08
`

let files = 0

/** The message loading `text` from a file fails with. */
async function failure(text: string, options = { builtins: true }): Promise<string> {
  const path = join(dir, `catalog-${++files}.yaml`)
  await Bun.write(path, text)
  return (await rejection(loadCatalog(path, {}, options))).message
}

/** `text` with the one line holding `from` changed to `to`. */
function changed(from: string, to: string): string {
  expect(valid.split(from)).toHaveLength(2)
  return valid.replace(from, to)
}

/** `line:column` (both from 1) where `part` starts in `text`, counted here from the text itself. */
function at(text: string, part: string): string {
  const index = text.indexOf(part)
  expect(index).toBeGreaterThanOrEqual(0)
  const before = text.slice(0, index).split('\n')
  return `${before.length}:${before.at(-1)!.length + 1}`
}

describe('catalog file errors', () => {
  test('the valid file loads', async () => {
    const path = join(dir, 'valid.yaml')
    await Bun.write(path, valid)
    const catalog = await loadCatalog(path, {})
    expect([...catalog.models.keys()]).toEqual(['demo/echo', 'a/first', 'a/second'])
  })

  test('a wrong type names the file, line, column and field', async () => {
    const text = changed('inputPerMTok: 0.15', 'inputPerMTok: "0.15"')
    const message = await failure(text)
    expect(message).toContain(`Catalog ${dir}/catalog-${files}.yaml is invalid:`)
    expect(message).toContain(
      `catalog-${files}.yaml:${at(text, 'inputPerMTok: "0.15"')}: models[1].pricing.inputPerMTok: Expected number`,
    )
  })

  test('an unknown field is placed at its key', async () => {
    const text = changed('    name: Second\n', '    name: Second\n    colour: blue\n')
    expect(await failure(text)).toContain(
      `:${at(text, 'colour')}: models[2].colour: Unexpected property`,
    )
  })

  test('a missing price is placed at the entry that lacks it', async () => {
    const text = changed('      inputPerMTok: 1\n', '')
    expect(await failure(text)).toContain(
      `:${at(text, 'pricing:\n      outputPerMTok')}: models[2].pricing.inputPerMTok: Expected required property`,
    )
  })

  test('a route to an unknown provider is placed at the route’s provider, in block style too', async () => {
    const text = changed('      - provider: p\n', '      - provider: q\n')
    expect(await failure(text)).toContain(
      `:${at(text, 'provider: q')}: models[2].routes[0].provider: unknown provider "q"`,
    )
  })

  test('a provider style outside the known ones names them at its line', async () => {
    const text = changed('style: openai, baseUrl', 'style: openia, baseUrl')
    expect(await failure(text)).toContain(
      `:${at(text, 'style: openia')}: providers[1].style: expected one of openai, anthropic`,
    )
  })

  test('a field of the wrong form says in words what it takes, with what was written', async () => {
    const url = changed('baseUrl: "http://127.0.0.1:1/v1"', 'baseUrl: "127.0.0.1:1/v1"')
    expect(await failure(url)).toContain(
      `:${at(url, 'baseUrl')}: providers[1].baseUrl: expected an http:// or https:// URL (got "127.0.0.1:1/v1")`,
    )
    const key = changed('apiKeyEnv: P_KEY', 'apiKeyEnv: p-key')
    expect(await failure(key)).toContain(
      `providers[1].apiKeyEnv: expected an environment variable name in capitals, such as OPENAI_API_KEY (got "p-key")`,
    )
    const id = changed('  - id: a/first\n', '  - id: First\n')
    expect(await failure(id)).toContain(
      `:${at(id, 'id: First')}: models[1].id: expected author/model in lowercase letters`,
    )
    const size = changed('1024x1024/hd: 0.08', 'large: 0.08')
    expect(await failure(size)).toContain(
      `images[0].prices.large: expected a price key as <width>x<height>/<quality>, such as 1024x1024/standard (got "large")`,
    )
    expect(await failure(id)).not.toContain('Expected string to match')
  })

  test('problems found after the shape is checked are placed too', async () => {
    const text = changed('candidates: [a/first,', 'candidates: [a/third,')
      .replace('1024x1024/hd: 0.08', '1024x1024/hd: 0.0800000000001')
      .replace(
        'maxOutputTokens: 100\n    pricing: { inputPerMTok: 0.15',
        'maxOutputTokens: 5000\n    pricing: { inputPerMTok: 0.15',
      )
    const message = await failure(text)
    expect(message).toContain(
      `:${at(text, 'a/third')}: auto[0].candidates[0]: unknown model "a/third"`,
    )
    expect(message).toContain(
      `:${at(text, '1024x1024/hd')}: images[0].prices["1024x1024/hd"]: at most nine decimals`,
    )
    expect(message).toContain(
      `:${at(text, 'maxOutputTokens: 5000')}: models[1].maxOutputTokens: larger than contextLength`,
    )
  })

  test('with the built-in provider left out, models keep the index and line they have in the file', async () => {
    const text = changed('provider: p, model: first', 'provider: nope, model: first')
    expect(await failure(text, { builtins: false })).toContain(
      `:${at(text, 'provider: nope')}: models[1].routes[0].provider: unknown provider "nope"`,
    )
  })

  test('past twenty problems, the rest are counted, not dropped silently', async () => {
    const models = Array.from(
      { length: 25 },
      (_, index) =>
        `  - { id: a/m${index}, contextLength: "many", maxOutputTokens: 100, pricing: { inputPerMTok: 0, outputPerMTok: 0 }, routes: [ { provider: p, model: m } ] }`,
    )
    const text = `providers:\n  - { id: p, style: openai, baseUrl: "http://127.0.0.1:1/v1", apiKeyEnv: P_KEY }\nmodels:\n${models.join('\n')}\n`
    const message = await failure(text)
    expect(message.match(/contextLength: Expected integer/g)).toHaveLength(20)
    expect(message).toContain('…and 5 more (the first 20 are listed)')
  })

  test('a YAML syntax error gives its line and column', async () => {
    const text = changed('      outputPerMTok: 2\n', '     outputPerMTok: 2\n')
    const message = await failure(text)
    expect(message).toStartWith(`Catalog ${dir}/catalog-${files}.yaml is not valid YAML:\n  `)
    expect(message).toContain(`catalog-${files}.yaml:${at(text, '     outputPerMTok')}: `)
    const unclosed = changed(
      'routes: [ { provider: p, model: first } ]',
      'routes: [ { provider: p, model: first }',
    )
    expect(await failure(unclosed)).toMatch(
      new RegExp(
        `catalog-${files}\\.yaml:${at(unclosed, '  - id: a/second').split(':')[0]}:\\d+: `,
      ),
    )
  })

  test('a key written twice in one entry is an error at the second', async () => {
    const text = changed('    name: Second\n', '    name: Second\n    contextLength: 2000\n')
    const message = await failure(text)
    expect(message).toContain('is not valid YAML')
    expect(message).toContain(
      `:${at(text, 'contextLength: 1000\n    maxOutputTokens: 100\n    pricing:\n')}: Map keys must be unique`,
    )
  })
})
