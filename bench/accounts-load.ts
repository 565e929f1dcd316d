/**
 * The mixed traffic of `bun run bench:accounts`: wrk with one thread and a Lua script that, for
 * every request, picks one of six kinds (the three client styles, streaming and not) and one of the
 * run's keys at random. The requests are formatted once per kind when wrk starts, with the key left
 * out; each request is then two string concatenations, so wrk's thread stays far below the
 * gateway's cost.
 */
import { capture } from './processes.ts'
import { luaString, WRK_DONE, wrkResult } from './wrk.ts'

export type TrafficKind = {
  style: 'chat' | 'responses' | 'messages'
  stream: boolean
  path: string
  body: Record<string, unknown>
  headers: Record<string, string>
}

const SYSTEM = 'You are a benchmark.'
const PROMPT = 'Say hello.'
const json = { 'Content-Type': 'application/json' }

/** The six kinds of request, for `model`; each is sent with the same probability. */
export function trafficKinds(model: string): TrafficKind[] {
  const kinds: TrafficKind[] = []
  for (const stream of [false, true]) {
    kinds.push({
      style: 'chat',
      stream,
      path: '/v1/chat/completions',
      headers: json,
      body: {
        model,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: PROMPT },
        ],
        max_tokens: 64,
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      },
    })
    kinds.push({
      style: 'responses',
      stream,
      path: '/v1/responses',
      headers: json,
      body: {
        model,
        instructions: SYSTEM,
        input: PROMPT,
        max_output_tokens: 64,
        ...(stream ? { stream: true } : {}),
      },
    })
    kinds.push({
      style: 'messages',
      stream,
      path: '/v1/messages',
      headers: { ...json, 'anthropic-version': '2023-06-01' },
      body: {
        model,
        system: SYSTEM,
        messages: [{ role: 'user', content: PROMPT }],
        max_tokens: 64,
        ...(stream ? { stream: true } : {}),
      },
    })
  }
  return kinds
}

const KEY_MARK = '@KEY@'

/** The wrk script: `wrk … -s SCRIPT URL -- KEYS_FILE SEED`. */
export function mixedScript(kinds: TrafficKind[]): string {
  const table = kinds
    .map((kind) => {
      const headers = Object.entries(kind.headers)
        .map(([name, value]) => `[ ${luaString(name)} ] = ${luaString(value)}`)
        .join(', ')
      return `  { path = ${luaString(kind.path)}, body = ${luaString(JSON.stringify(kind.body))}, headers = { ${headers} } },`
    })
    .join('\n')
  return `local kinds = {
${table}
}
local keys, templates = {}, {}

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then keys[#keys + 1] = line end
  end
  math.randomseed(tonumber(args[2]))
  for i, kind in ipairs(kinds) do
    kind.headers["Authorization"] = "Bearer ${KEY_MARK}"
    local raw = wrk.format("POST", kind.path, kind.headers, kind.body)
    local at = string.find(raw, "${KEY_MARK}", 1, true)
    templates[i] = { string.sub(raw, 1, at - 1), string.sub(raw, at + ${KEY_MARK.length}) }
  end
end

function request()
  local template = templates[math.random(#templates)]
  return template[1] .. keys[math.random(#keys)] .. template[2]
end

${WRK_DONE}`
}

export type MixedResult = {
  requests: number
  durationS: number
  rps: number
  p50Us: number
  p99Us: number
  /** Answers with a status of 300 or more, as wrk counts them. */
  non2xx: number
  errors: { connect: number; read: number; write: number; timeout: number }
  /** CPU seconds wrk used. */
  cpuS: number
}

/** Runs wrk against `origin` for `durationS` seconds; the keys are one a line in `keysFile`. */
export async function runMixedLoad(options: {
  wrk: string
  scriptPath: string
  keysFile: string
  origin: string
  model: string
  connections: number
  durationS: number
  seed: number
}): Promise<MixedResult> {
  await Bun.write(options.scriptPath, mixedScript(trafficKinds(options.model)))
  const printed = await capture([
    options.wrk,
    '-t1',
    `-c${options.connections}`,
    `-d${options.durationS}s`,
    '--timeout',
    '10s',
    '-s',
    options.scriptPath,
    `${options.origin}/`,
    '--',
    options.keysFile,
    String(options.seed),
  ])
  const r = wrkResult(printed, options.origin)
  const durationS = r.durationUs / 1e6
  return {
    requests: r.requests,
    durationS,
    rps: durationS > 0 ? r.requests / durationS : 0,
    p50Us: r.p50Us,
    p99Us: r.p99Us,
    non2xx: r.status,
    errors: { connect: r.connect, read: r.read, write: r.write, timeout: r.timeout },
    cpuS: printed.cpuS,
  }
}
