/**
 * The VAPID key pair that signs browser push messages: VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY when set,
 * otherwise a pair generated at first start and kept in DATA_DIR/vapid-keys.json, like the operator
 * token. Browsers bind a subscription to the public key, so the pair must not change: several
 * hosts must share it through the settings.
 */
import { ConfigError } from '../../core/config.ts'
import { storedSecret, storedSecretPath } from '../../stores/stored-secrets.ts'

export type VapidKeys = { publicKey: string; privateKey: string; subject: string }

type VapidSettings = {
  VAPID_PUBLIC_KEY: string
  VAPID_PRIVATE_KEY: string
  VAPID_SUBJECT: string
  PUBLIC_SITE_URL: string
  MAIL_FROM: string
  DATA_DIR: string
}

export async function resolveVapidKeys(config: VapidSettings): Promise<VapidKeys> {
  const subject = vapidSubject(config)
  if (config.VAPID_PUBLIC_KEY || config.VAPID_PRIVATE_KEY) {
    if (!config.VAPID_PUBLIC_KEY || !config.VAPID_PRIVATE_KEY)
      throw new ConfigError(
        'VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY must be set together (or neither, to generate a pair under DATA_DIR).',
      )
    checkKeys(
      config.VAPID_PUBLIC_KEY,
      config.VAPID_PRIVATE_KEY,
      'VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY',
    )
    return { publicKey: config.VAPID_PUBLIC_KEY, privateKey: config.VAPID_PRIVATE_KEY, subject }
  }
  const text = await storedSecret(config.DATA_DIR, 'vapidKeys', async () => {
    const { default: webpush } = await import('web-push')
    return JSON.stringify(webpush.generateVAPIDKeys())
  })
  const stored = JSON.parse(text) as { publicKey: string; privateKey: string }
  checkKeys(stored.publicKey, stored.privateKey, storedSecretPath(config.DATA_DIR, 'vapidKeys'))
  return { publicKey: stored.publicKey, privateKey: stored.privateKey, subject }
}

/** The contact push services may use: VAPID_SUBJECT, else the https site URL, else the sender's address. */
function vapidSubject(config: VapidSettings): string {
  if (config.VAPID_SUBJECT) {
    if (!/^(mailto:|https:\/\/)/.test(config.VAPID_SUBJECT))
      throw new ConfigError('VAPID_SUBJECT must be a mailto: address or an https: URL.')
    return config.VAPID_SUBJECT
  }
  if (config.PUBLIC_SITE_URL.startsWith('https://')) return new URL(config.PUBLIC_SITE_URL).origin
  const address = /<([^>]+)>/.exec(config.MAIL_FROM)?.[1] ?? config.MAIL_FROM.trim()
  return `mailto:${address}`
}

/** An uncompressed P-256 public key (65 bytes) and a private scalar (32 bytes), base64url. */
function checkKeys(publicKey: string, privateKey: string, where: string): void {
  const length = (text: string) =>
    /^[A-Za-z0-9_-]+$/.test(text) ? Buffer.from(text, 'base64url').length : -1
  if (length(publicKey) !== 65 || length(privateKey) !== 32) {
    throw new ConfigError(
      `${where}: not a VAPID key pair (base64url, 65-byte public key and 32-byte private key; generate one with \`bunx web-push generate-vapid-keys\`).`,
    )
  }
}
