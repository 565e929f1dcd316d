/**
 * Structured logging: one JSON object per line, `{"time", "level", "msg", ...fields}`, on stdout (warn
 * and error on stderr). Callers pass identifiers (request ID, key ID, prefix), never secrets or message
 * content; lines about one request carry its `requestId`. Writing a line never throws: errors become
 * `{name, message, code}` (with the stack at error level), bigints strings, and fields that still cannot
 * be written are replaced by a note saying so.
 */

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const
export type LogLevel = keyof typeof levels

let threshold: number = levels.info

/** Field names the line itself uses; a field of the same name is written as `field.<name>`. */
const reserved = new Set(['time', 'level', 'msg'])

export function setLogLevel(level: LogLevel): void {
  threshold = levels[level]
}

function write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (levels[level] < threshold) return
  const line = `${format(level, msg, fields)}\n`
  if (levels[level] >= levels.warn) process.stderr.write(line)
  else process.stdout.write(line)
}

/** One log line as JSON (without the newline). */
export function format(level: LogLevel, msg: string, fields?: Record<string, unknown>): string {
  const entry: Record<string, unknown> = { time: new Date().toISOString(), level, msg }
  for (const [name, value] of Object.entries(fields ?? {}))
    entry[reserved.has(name) ? `field.${name}` : name] = value
  const replacer = replacerFor(level)
  try {
    return JSON.stringify(entry, replacer)
  } catch (error) {
    const note = `fields not serializable: ${error instanceof Error ? error.message : String(error)}`
    return JSON.stringify({ time: entry.time, level, msg, logError: note })
  }
}

function replacerFor(level: LogLevel) {
  return (_key: string, value: unknown): unknown => {
    if (typeof value === 'bigint') return value.toString()
    if (value instanceof Error) return describeError(value, level === 'error')
    return value
  }
}

function describeError(error: Error, withStack: boolean): Record<string, unknown> {
  const described: Record<string, unknown> = { name: error.name, message: error.message }
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' || typeof code === 'number') described.code = code
  if (withStack && error.stack) described.stack = error.stack
  if (error.cause !== undefined)
    described.cause =
      error.cause instanceof Error ? describeError(error.cause, false) : String(error.cause)
  return described
}

/** Whether a level is written; lets callers skip building fields nobody will see. */
export function logs(level: LogLevel): boolean {
  return levels[level] >= threshold
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
}

/** A store's address as a line may show it: its password replaced; `unreadable` for one that is not a URL. */
export function redactUrl(url: string, unreadable: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return unreadable
  }
}
