import { describe, expect, test } from 'bun:test'
import { MAX_BODY_BYTES, readJsonBody } from '../../../proxy/pipeline/read-body.ts'

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://x/', { method: 'POST', body, headers })

describe('request body', () => {
  test('a JSON object is read with its size', async () => {
    expect(await readJsonBody(post('{"a":[1,2]}'))).toEqual({
      ok: true,
      value: { a: [1, 2] },
      bytes: 11,
    })
  })

  test('over 32 MB by Content-Length is refused before reading', async () => {
    const result = await readJsonBody(post('{}', { 'content-length': String(MAX_BODY_BYTES + 1) }))
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error.code).toBe('payload_too_large')
  })

  test('over 32 MB without Content-Length is refused while reading', async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(32)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ > 40) controller.close()
        else controller.enqueue(chunk)
      },
    })
    const result = await readJsonBody(new Request('http://x/', { method: 'POST', body: stream }))
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error.code).toBe('payload_too_large')
  })

  test('not JSON, not an object, or nested too deep is invalid_request', async () => {
    for (const [body, text] of [
      ['{"a":', 'not valid JSON'],
      ['[1,2]', 'must be a JSON object'],
      [`{"a":${'['.repeat(70)}${']'.repeat(70)}}`, 'nested more than 64 levels'],
      [`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 'nested more than 64 levels'],
    ] as const) {
      const result = await readJsonBody(post(body))
      expect(result.ok).toBe(false)
      if (!result.ok) {
        expect(result.error.code).toBe('invalid_request')
        expect(result.error.message).toContain(text)
      }
    }
  })
})
