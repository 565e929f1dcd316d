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

  test('a dollar setting written otherwise is refused saying how to write one', () => {
    expect(() => loadConfig({ KEY_DAILY_LIMIT_USD: '-5' })).toThrow(
      'KEY_DAILY_LIMIT_USD: must be an amount in USD, in digits with at most 9 decimals, such as 5 or 0.25 (got "-5")',
    )
  })

  test('top-up bounds must be whole cents above nothing', () => {
    for (const [name, value] of [
      ['TOPUP_MIN_USD', '5.001'],
      ['TOPUP_MIN_USD', '0'],
      ['TOPUP_MAX_USD', '99.999'],
    ])
      expect(() => loadConfig({ [name!]: value })).toThrow(
        `${name}: must be a whole number of cents above 0, such as 5 or 0.50 (got "${value}")`,
      )
    expect(loadConfig({ TOPUP_MIN_USD: '0.50', TOPUP_MAX_USD: '250.25' }).TOPUP_MIN_USD).toBe(
      '0.50',
    )
  })

  test('an operator token too short to guess safely is refused without echoing it', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'hunter2' })).toThrow(
      /^Invalid configuration:\n {2}ADMIN_TOKEN: must be at least 16 characters$/,
    )
    expect(loadConfig({ ADMIN_TOKEN: 'a-long-enough-operator-token' }).ADMIN_TOKEN).toBe(
      'a-long-enough-operator-token',
    )
  })

  test('a URL setting of the wrong kind is refused naming it, without echoing its value', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error('expected a ConfigError')
    }
    expect(refusal({ DATABASE_URL: 'db.internal:5432/gateway' })).toBe(
      'Invalid configuration:\n  DATABASE_URL: not a postgres:// or postgresql:// URL (such as postgres://user:password@host:5432/database)',
    )
    expect(refusal({ REDIS_URL: 'http://secret@cache:6379' })).not.toContain('secret')
    expect(refusal({ REDIS_URL: 'http://cache:6379' })).toContain(
      'REDIS_URL: not a redis:// or rediss:// or redis+cluster:// or rediss+cluster:// URL',
    )
    expect(refusal({ SMTP_URL: 'mail.example.com' })).toContain(
      'SMTP_URL: not a smtp:// or smtps://',
    )
    expect(refusal({ PUBLIC_SITE_URL: 'example.com' })).toContain('PUBLIC_SITE_URL: not a http://')
    // Read only once payments run: a wrong one would stop the start with a stack trace (Stripe's) or
    // fail every round of the deposit watcher.
    expect(refusal({ STRIPE_API_URL: 'stripe-mock:12111' })).toContain(
      'STRIPE_API_URL: not a http:// or https:// URL',
    )
    expect(refusal({ DEPOSIT_RPC_URL: 'wss://rpc.example.com' })).toContain(
      'DEPOSIT_RPC_URL: not a http:// or https:// URL',
    )
    expect(
      loadConfig({
        DATABASE_URL: 'postgresql://u:p@db:5432/g',
        REDIS_URL: 'rediss+cluster://10.0.0.1:6379,10.0.0.2:6379',
        SMTP_URL: 'smtps://u:p@mail:465',
        PUBLIC_SITE_URL: 'https://example.com',
        STRIPE_API_URL: 'http://127.0.0.1:12111',
        DEPOSIT_RPC_URL: 'https://rpc.example.com',
      }).REDIS_URL,
    ).toBe('rediss+cluster://10.0.0.1:6379,10.0.0.2:6379')
  })

  test('settings that do not work together are refused naming both', () => {
    expect(() => loadConfig({ PORT: '9000', SITE_PORT: '9000' })).toThrow(
      'PORT and SITE_PORT: both are 9000; the API server and the site server each need their own port',
    )
    expect(loadConfig({ PORT: '0', SITE_PORT: '0' }).PORT).toBe(0)
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_x' })).toThrow(
      'STRIPE_WEBHOOK_SECRET: card top-ups need both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET',
    )
    expect(() => loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_x' })).toThrow(
      'STRIPE_SECRET_KEY: card top-ups need both',
    )
    expect(() => loadConfig({ IMAGE_COST_DEADLINE_MS: '60000' })).toThrow(
      "IMAGE_COST_DEADLINE_MS and UPSTREAM_TIMEOUT_MS: an image request's hold (60000 ms) must outlast the request itself (110000 ms)",
    )
    expect(loadConfig({ IMAGE_COST_DEADLINE_MS: '60000', UPSTREAM_TIMEOUT_MS: '30000' }).PORT).toBe(
      8080,
    )
    expect(() => loadConfig({ TOPUP_MIN_USD: '100', TOPUP_MAX_USD: '5' })).toThrow(
      'TOPUP_MIN_USD and TOPUP_MAX_USD: the smallest top-up (100) is above the largest (5)',
    )
  })

  test('a dashboard origin a browser would never send is refused, naming the origin to write', () => {
    expect(() => loadConfig({ DASHBOARD_ORIGINS: 'https://dash.example.com/' })).toThrow(
      'DASHBOARD_ORIGINS: "https://dash.example.com/" is not an origin (scheme, host and port only, such as https://dash.example.com); write https://dash.example.com',
    )
    expect(() => loadConfig({ DASHBOARD_ORIGINS: 'dash.example.com' })).toThrow(
      'DASHBOARD_ORIGINS: "dash.example.com" is not an origin',
    )
    expect(() =>
      loadConfig({ DASHBOARD_ORIGINS: 'https://a.example.com, https://b.example.com/app' }),
    ).toThrow('"https://b.example.com/app" is not an origin')
    expect(
      loadConfig({ DASHBOARD_ORIGINS: 'https://a.example.com, http://127.0.0.1:5173' })
        .DASHBOARD_ORIGINS,
    ).toBe('https://a.example.com, http://127.0.0.1:5173')
  })

  test("serving other machines needs PUBLIC_SITE_URL: the site's address is never a request's Host", () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'gateway.internal'])
      expect(() => loadConfig({ HOST: host })).toThrow(
        `PUBLIC_SITE_URL and HOST: serving other machines (HOST ${host}) needs the site's public address in PUBLIC_SITE_URL`,
      )
    expect(loadConfig({ HOST: '0.0.0.0', PUBLIC_SITE_URL: 'https://example.com' }).HOST).toBe(
      '0.0.0.0',
    )
    for (const host of ['127.0.0.1', '127.0.1.1', 'localhost', '::1', '[::1]'])
      expect(loadConfig({ HOST: host }).HOST).toBe(host)
  })
})
