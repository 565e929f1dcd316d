import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../../proxy/core/config.ts'

describe('config', () => {
  test('defaults apply when nothing is set', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      PORT: 8080,
      SITE_PORT: 8081,
      CATALOG_FILE: 'catalog.yaml',
      DATA_DIR: './data',
      DATABASE_URL: '',
      REDIS_URL: '',
    })
    expect(config.keyDailyLimitNano).toBe(50_000_000_000)
  })

  test('values are converted from the environment', () => {
    expect(
      loadConfig({ PORT: '9000', KEY_DAILY_LIMIT_USD: '2.5', LOG_LEVEL: 'debug' }),
    ).toMatchObject({ PORT: 9000, keyDailyLimitNano: 2_500_000_000, LOG_LEVEL: 'debug' })
  })

  test('every invalid variable is named in one error', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        LOG_LEVEL: 'loud',
        KEY_DAILY_LIMIT_USD: '-3',
        MAX_CONCURRENT_REQUESTS: '0',
      })
      throw new Error('expected a ConfigError')
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError)
      const message = (error as Error).message
      expect(message).toContain('PORT: must be a whole number (got "eighty")')
      expect(message).toContain('LOG_LEVEL: expected one of debug, info, warn, error')
      expect(message).toContain('KEY_DAILY_LIMIT_USD')
      expect(message).toContain('MAX_CONCURRENT_REQUESTS')
    }
  })

  test('a whole-number setting written otherwise is refused, not rounded', () => {
    for (const [name, value] of [
      ['FREE_REQUESTS_PER_DAY', '1.5'],
      ['PORT', '1e3'],
      ['MAX_CONCURRENT_REQUESTS', '2.9'],
    ]) {
      expect(() => loadConfig({ [name!]: value })).toThrow(
        `${name}: must be a whole number (got "${value}")`,
      )
    }
    expect(loadConfig({ PORT: ' 9000 ', FREE_REQUESTS_PER_DAY: '-0' })).toMatchObject({
      PORT: 9000,
    })
  })
})
