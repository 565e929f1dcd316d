// VAPID keys from the settings or generated once under DATA_DIR.
import { describe, expect, test } from 'bun:test'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import webpush from 'web-push'
import { resolveVapidKeys } from '../../../../proxy/accounts/alerts/vapid-keys.ts'
import { ConfigError } from '../../../../proxy/core/config.ts'
import { storedSecretPath } from '../../../../proxy/stores/stored-secrets.ts'
import { rejection } from '../../../helpers/settle.ts'

const settings = (dataDir: string, overrides: Record<string, string> = {}) => ({
  VAPID_PUBLIC_KEY: '',
  VAPID_PRIVATE_KEY: '',
  VAPID_SUBJECT: '',
  PUBLIC_SITE_URL: '',
  MAIL_FROM: 'Model Gateway <alerts@gateway.test>',
  DATA_DIR: dataDir,
  ...overrides,
})

describe('VAPID keys', () => {
  test('generated at first start, kept with mode 0600, and the same afterwards', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'vapid-'))
    try {
      const [first, second] = await Promise.all([
        resolveVapidKeys(settings(dataDir)),
        resolveVapidKeys(settings(dataDir)),
      ])
      expect(second).toEqual(first)
      expect((await resolveVapidKeys(settings(dataDir))).publicKey).toBe(first.publicKey)
      expect((await stat(storedSecretPath(dataDir, 'vapidKeys'))).mode & 0o777).toBe(0o600)
      expect(first.subject).toBe('mailto:alerts@gateway.test')
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  test('a configured pair is used as given; half a pair or a wrong key is refused at boot', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'vapid-'))
    try {
      const pair = webpush.generateVAPIDKeys()
      const keys = await resolveVapidKeys(
        settings(dataDir, {
          VAPID_PUBLIC_KEY: pair.publicKey,
          VAPID_PRIVATE_KEY: pair.privateKey,
          PUBLIC_SITE_URL: 'https://gateway.example',
        }),
      )
      expect(keys).toEqual({ ...pair, subject: 'https://gateway.example' })
      expect(await Bun.file(storedSecretPath(dataDir, 'vapidKeys')).exists()).toBe(false)
      const refused = async (values: Record<string, string>) =>
        (await rejection(resolveVapidKeys(settings(dataDir, values)))).message
      expect(await refused({ VAPID_PUBLIC_KEY: pair.publicKey })).toContain('set together')
      expect(
        await refused({ VAPID_PUBLIC_KEY: 'abc', VAPID_PRIVATE_KEY: pair.privateKey }),
      ).toContain('not a VAPID key pair')
      expect(await refused({ VAPID_SUBJECT: 'ops@example.com' })).toContain('VAPID_SUBJECT')
      // Settings' refusals: the start logs their message alone, without a stack trace.
      for (const values of <Record<string, string>[]>[
        { VAPID_PUBLIC_KEY: pair.publicKey },
        { VAPID_PUBLIC_KEY: 'abc', VAPID_PRIVATE_KEY: pair.privateKey },
        { VAPID_SUBJECT: 'ops@example.com' },
      ])
        expect(await rejection(resolveVapidKeys(settings(dataDir, values)))).toBeInstanceOf(
          ConfigError,
        )
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
