// Push endpoints limited to public https hosts: by name, by literal address and by what the name resolves to.
import { describe, expect, test } from 'bun:test'
import { checkPushEndpoint, type Resolve } from '../../../../proxy/accounts/alerts/push-endpoint.ts'
import { sendPush } from '../../../../proxy/accounts/alerts/push-sender.ts'
import webpush from 'web-push'
import { browserKeys, startPushService } from './push-service.ts'

/** Name resolution as a DNS server would answer it (this machine reaches none). */
const resolvesTo =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address) => ({ address }))

const refusalOf = (endpoint: string, resolve?: Resolve, allowPrivate = false) =>
  checkPushEndpoint(endpoint, allowPrivate, resolve).then(
    () => undefined,
    (error: Error) => error.message,
  )

describe('push endpoints', () => {
  test('public https endpoints are accepted', async () => {
    const google = resolvesTo('142.250.74.42', '2a00:1450:4001:82b::200a')
    expect(await refusalOf('https://fcm.googleapis.com/fcm/send/abc', google)).toBeUndefined()
    expect(await refusalOf('https://142.250.74.42/x')).toBeUndefined()
  })

  test('http, loopback and private addresses are refused unless allowed for local testing', async () => {
    for (const endpoint of [
      'http://push.example/x',
      'https://127.0.0.1/x',
      'https://127.1/x',
      'https://localhost/x',
      'https://localhost./x',
      'https://push.internal/x',
      'https://10.1.2.3/x',
      'https://192.168.0.4/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://[fd00::1]/x',
      'https://169.254.169.254/x',
      'nonsense',
    ])
      expect(await refusalOf(endpoint)).toStartWith('endpoint: ')
    expect(await refusalOf('http://127.0.0.1:9999/x', undefined, true)).toBeUndefined()
    expect(await refusalOf('ftp://127.0.0.1/x')).toBe(
      'endpoint: push endpoints must be https URLs.',
    )
  })

  test('a name that resolves to a private or loopback address is refused', async () => {
    const privately = 'endpoint: must be a public push service, not a local or private address.'
    expect(await refusalOf('https://push.example/x', resolvesTo('10.0.0.7'))).toBe(privately)
    expect(await refusalOf('https://push.example/x', resolvesTo('93.184.216.34', '::1'))).toBe(
      privately,
    )
  })

  test('a name the system cannot resolve is refused naming its host', async () => {
    expect(await refusalOf('https://push.invalid/x')).toBe(
      'endpoint: its host push.invalid does not resolve.',
    )
  })
})

describe('sending a push message', () => {
  test('is checked again before each send: an endpoint that is not public gets nothing', async () => {
    const push = startPushService()
    try {
      const pair = webpush.generateVAPIDKeys()
      const vapid = { ...pair, subject: 'mailto:ops@example.com' }
      const keys = browserKeys()
      const subscription = { endpoint: `${push.url}/push/x`, p256dh: keys.p256dh, auth: keys.auth }
      // Registered while allowed for local testing, sent once it no longer is.
      expect(await sendPush(vapid, subscription, '{}', false)).toBe('refused')
      expect(push.messages).toHaveLength(0)
      expect(await sendPush(vapid, subscription, '{}', true)).toBe('sent')
      expect(push.messages).toHaveLength(1)
    } finally {
      await push.stop()
    }
  })
})
