import { describe, expect, test } from 'bun:test'
import { SseSplitter } from '../../../proxy/providers/sse.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('SSE splitter', () => {
  test('events split across chunks come out whole, in order', () => {
    const splitter = new SseSplitter()
    expect(splitter.push(bytes('data: {"a"'))).toEqual([])
    expect(splitter.push(bytes(':1}\n\ndata: [DO'))).toEqual([
      { raw: 'data: {"a":1}', event: undefined, data: '{"a":1}' },
    ])
    expect(splitter.push(bytes('NE]\n\n'))).toEqual([
      { raw: 'data: [DONE]', event: undefined, data: '[DONE]' },
    ])
  })

  test('named events, multi-line data, comments and CRLF', () => {
    const splitter = new SseSplitter()
    const events = splitter.push(
      bytes('event: ping\r\ndata: a\r\ndata: b\r\n\r\n: keep-alive\r\n\r\n'),
    )
    expect(events).toEqual([
      { raw: 'event: ping\ndata: a\ndata: b', event: 'ping', data: 'a\nb' },
      { raw: ': keep-alive', event: undefined, data: undefined },
    ])
  })

  test('a multi-byte character split between chunks survives', () => {
    const splitter = new SseSplitter()
    const encoded = bytes('data: "héllo €"\n\n')
    const cut = encoded.indexOf(0xe2) + 1
    expect(splitter.push(encoded.slice(0, cut))).toEqual([])
    expect(splitter.push(encoded.slice(cut))[0]!.data).toBe('"héllo €"')
  })

  test('an event without its closing blank line is returned on flush', () => {
    const splitter = new SseSplitter()
    splitter.push(bytes('data: last'))
    expect(splitter.flush()).toEqual([{ raw: 'data: last', event: undefined, data: 'last' }])
  })
})
