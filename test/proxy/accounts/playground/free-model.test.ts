// Which model free chat uses when the user names none: the configured one when a provider of it is set up,
// else the demo model the gateway answers itself, so free chat answers on a gateway without provider keys.
import { expect, test } from 'bun:test'
import { freeChatModel } from '../../../../proxy/accounts/playground/free-model.ts'
import { loadCatalog } from '../../../../proxy/core/catalog/catalog.ts'

test('without a key for any of its providers, Auto Free gives way to the demo model', async () => {
  const catalog = await loadCatalog('catalog.yaml', {})
  expect(freeChatModel(catalog, 'service/auto:free')).toBe('demo/echo')
  // A free model named directly is kept when its provider is the gateway's own.
  expect(freeChatModel(catalog, 'demo/echo')).toBe('demo/echo')
})

test('with a key for a provider of one of its candidates, Auto Free stays', async () => {
  const catalog = await loadCatalog('catalog.yaml', { GROQ_API_KEY: 'gsk-test' })
  expect(freeChatModel(catalog, 'service/auto:free')).toBe('service/auto:free')
})

test('without the demo model there is nothing to give way to: the configured choice stays (and is refused)', async () => {
  const catalog = await loadCatalog('catalog.yaml', {}, { builtins: false })
  expect(freeChatModel(catalog, 'service/auto:free')).toBe('service/auto:free')
})
