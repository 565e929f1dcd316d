/**
 * Structured logging: one JSON object per line on stdout. Callers pass identifiers (request ID, key
 * ID, prefix), never secrets or message content.
 */

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const
export type LogLevel = keyof typeof levels

let threshold: number = levels.info

export function setLogLevel(level: LogLevel): void {
  threshold = levels[level]
}

function write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
  if (levels[level] < threshold) return
  const line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }, errorReplacer)
  if (levels[level] >= levels.warn) process.stderr.write(`${line}\n`)
  else process.stdout.write(`${line}\n`)
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message }
  return value
}

/** Whether a level is written; lets callers skip building fields nobody will see. */
export function logs(level: LogLevel): boolean {
  return levels[level] >= threshold
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields),
}
