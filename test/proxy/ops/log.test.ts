// Log lines: one JSON object each, with time, level and msg first, and never a throw while writing one.
import { describe, expect, test } from 'bun:test'
import { format } from '../../../proxy/core/log.ts'

describe('log lines', () => {
  test('a line is one JSON object with time, level, msg and the fields', () => {
    const line = format('info', 'request', { requestId: 'req_1', status: 200 })
    expect(line).not.toContain('\n')
    const entry = JSON.parse(line)
    expect(Object.keys(entry).slice(0, 3)).toEqual(['time', 'level', 'msg'])
    expect(entry).toMatchObject({ level: 'info', msg: 'request', requestId: 'req_1', status: 200 })
    expect(new Date(entry.time).toISOString()).toBe(entry.time)
  })

  test('an error is written as its name, message and code, with its cause, without throwing', () => {
    const error = Object.assign(
      new Error('connection refused', { cause: new TypeError('socket closed') }),
      { code: 'ECONNREFUSED' },
    )
    const entry = JSON.parse(format('warn', 'store call failed', { requestId: 'req_2', error }))
    expect(entry.error).toEqual({
      name: 'Error',
      message: 'connection refused',
      code: 'ECONNREFUSED',
      cause: { name: 'TypeError', message: 'socket closed' },
    })
  })

  test('an error at error level carries its stack', () => {
    const entry = JSON.parse(format('error', 'failed', { error: new Error('boom') }))
    expect(entry.error.stack).toContain('boom')
  })

  test('bigints become strings and circular fields become a note instead of a throw', () => {
    expect(JSON.parse(format('info', 'sum', { totalNano: 12n })).totalNano).toBe('12')
    const circular: Record<string, unknown> = {}
    circular.self = circular
    const entry = JSON.parse(format('error', 'odd fields', { circular }))
    expect(entry).toMatchObject({ level: 'error', msg: 'odd fields' })
    expect(entry.logError).toContain('not serializable')
  })

  test('a field cannot overwrite the line’s own time, level or msg', () => {
    const entry = JSON.parse(format('info', 'real', { msg: 'fake', level: 'error' }))
    expect(entry).toMatchObject({
      level: 'info',
      msg: 'real',
      'field.msg': 'fake',
      'field.level': 'error',
    })
  })
})
