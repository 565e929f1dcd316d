import { describe, expect, test } from 'bun:test'
import { buildCatalog } from '../../../proxy/core/catalog/catalog.ts'
import { estimate } from '../../../proxy/pipeline/estimate.ts'
import { measureChatPrompt } from '../../../proxy/pipeline/styles/chat/prompt.ts'
import { measureMessagesPrompt } from '../../../proxy/pipeline/styles/messages/prompt.ts'
import { measureResponsesPrompt } from '../../../proxy/pipeline/styles/responses/style.ts'
import type { ChatRequest } from '../../../shared/schemas/chat.ts'
import type { MessagesRequest } from '../../../shared/schemas/messages.ts'
import type { ResponsesRequest } from '../../../shared/schemas/responses.ts'

const catalog = buildCatalog(
  {
    providers: [{ id: 'p', style: 'openai', baseUrl: 'http://127.0.0.1:1', apiKeyEnv: 'K' }],
    models: [
      {
        id: 'a/cheap',
        contextLength: 1_000,
        maxOutputTokens: 100,
        pricing: { inputPerMTok: 1, outputPerMTok: 2 },
        routes: [{ provider: 'p', model: 'x' }],
      },
      {
        id: 'a/cached',
        contextLength: 10_000,
        maxOutputTokens: 100,
        pricing: { inputPerMTok: 1, outputPerMTok: 2, cacheWritePerMTok: 1.25 },
        routes: [{ provider: 'p', model: 'z' }],
      },
      {
        id: 'a/dear',
        contextLength: 600,
        maxOutputTokens: 500,
        pricing: { inputPerMTok: 10, outputPerMTok: 20 },
        routes: [{ provider: 'p', model: 'y' }],
      },
    ],
  },
  {},
)
const candidate = (id: string) => ({
  model: catalog.models.get(id)!,
  routes: catalog.models.get(id)!.routes,
})

describe('estimate', () => {
  test('the hold is input bytes plus overhead at the input price and the output limit at the output price', () => {
    const result = estimate([candidate('a/cheap')], { textBytes: 400, images: 0, messages: 2 }, 50)
    expect(result.holdNano).toBe((400 + 16) * 1_000 + 50 * 2_000)
    expect(result.tokens).toBe(100 + 16 + 50)
  })

  test('without an output limit the model maximum is held; the input is capped at the context', () => {
    expect(
      estimate([candidate('a/cheap')], { textBytes: 5_000, images: 0, messages: 1 }, undefined)
        .holdNano,
    ).toBe(1_000 * 1_000 + 100 * 2_000)
  })

  test('with fallbacks the most expensive candidate sets the hold', () => {
    // An image adds 2,000 tokens: the bound (2,018) passes both contexts, so each is capped at its own.
    const result = estimate(
      [candidate('a/cheap'), candidate('a/dear')],
      { textBytes: 10, images: 1, messages: 1 },
      undefined,
    )
    const cheap = 1_000 * 1_000 + 100 * 2_000
    const dear = 600 * 10_000 + 500 * 20_000
    expect(result.holdNano).toBe(Math.max(cheap, dear))
    expect(result.tokens).toBe(Math.ceil(10 / 4) + 2_008 + 500)
  })

  test('a request that offers tools holds the provider’s tool-use prompt as input too', () => {
    const prompt = { textBytes: 100, images: 0, messages: 1 }
    const plain = estimate([candidate('a/cached')], prompt, 10)
    const withTools = estimate([candidate('a/cached')], { ...prompt, tools: true }, 10)
    expect(withTools.promptBoundTokens - plain.promptBoundTokens).toBe(600)
    expect(withTools.tokens - plain.tokens).toBe(600)
  })

  test('input that may be written to the prompt cache is held at the write price when that is dearer', () => {
    const result = estimate([candidate('a/cached')], { textBytes: 992, images: 0, messages: 1 }, 10)
    expect(result.holdNano).toBe(1_000 * 1_250 + 10 * 2_000)
    // Where a write costs no more than plain input, plain input sets the hold.
    expect(
      estimate([candidate('a/cheap')], { textBytes: 992, images: 0, messages: 1 }, 10).holdNano,
    ).toBe(1_000 * 1_000 + 10 * 2_000)
  })

  test('the tokens-per-minute estimate of a prompt of file data is at most the largest context', () => {
    // A 5 MB PDF as base64: its bytes are no measure of its tokens, and no candidate reads more than 10,000.
    const result = estimate(
      [candidate('a/cheap'), candidate('a/cached')],
      { textBytes: 6_700_000, images: 0, messages: 1 },
      10,
    )
    expect(result.inputTokens).toBe(10_000 + 8)
    expect(result.tokens).toBe(10_000 + 8 + 10)
    expect(result.holdNano).toBe(10_000 * 1_250 + 10 * 2_000)
  })

  test('each page of a PDF given inline is held as an image, in every style and in a tool result', () => {
    // Two pages in a few hundred bytes: providers read each page as an image, thousands of tokens.
    const pdf = Buffer.from(
      '%PDF-1.4\n1 0 obj<</Type/Pages/Kids[2 0 R 3 0 R]/Count 2>>endobj\n' +
        '2 0 obj<</Type /Page/Parent 1 0 R>>endobj\n3 0 obj<</Type/Page/Parent 1 0 R>>endobj\n%%EOF\n',
    ).toString('base64')
    const document = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: pdf },
    }
    const messages = {
      model: 'a/cheap',
      max_tokens: 10,
      messages: [
        { role: 'user', content: [document] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: [document] }],
        },
      ],
    } as unknown as MessagesRequest
    expect(measureMessagesPrompt(messages, JSON.stringify(messages).length).pdfPages).toBe(4)
    const file = `data:application/pdf;base64,${pdf}`
    const chat = {
      model: 'a/cheap',
      messages: [
        { role: 'user', content: [{ type: 'file', file: { file_data: file, filename: 'a.pdf' } }] },
      ],
    } as unknown as ChatRequest
    const measured = measureChatPrompt(chat, JSON.stringify(chat).length)
    expect(measured.pdfPages).toBe(2)
    const responses = {
      model: 'a/cheap',
      input: [
        { role: 'user', content: [{ type: 'input_file', file_data: file, filename: 'a.pdf' }] },
      ],
    } as unknown as ResponsesRequest
    expect(measureResponsesPrompt(responses, JSON.stringify(responses).length, []).pdfPages).toBe(2)
    const held = estimate([candidate('a/cached')], measured, 10)
    expect(held.promptBoundTokens).toBe(measured.textBytes + 8 + 2 * 2_000)
  })
})
