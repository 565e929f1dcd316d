/**
 * A stand-in browser push service on 127.0.0.1 and a browser's subscription keys: records every push
 * message, answers 410 on paths under /gone (a subscription the browser dropped), and decrypts a
 * message (RFC 8291, aes128gcm) with the subscription's private key, as the browser would.
 */
import { createDecipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto'

export type PushMessage = { path: string; headers: Record<string, string>; body: Buffer }

export type PushService = { url: string; messages: PushMessage[]; stop(): Promise<void> }

export function startPushService(): PushService {
  const messages: PushMessage[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      messages.push({
        path,
        headers: Object.fromEntries(request.headers),
        body: Buffer.from(await request.arrayBuffer()),
      })
      return new Response(null, { status: path.startsWith('/gone') ? 410 : 201 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, messages, stop: () => server.stop(true) }
}

export type BrowserKeys = { ecdh: ECDH; p256dh: string; auth: string }

export function browserKeys(): BrowserKeys {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  return {
    ecdh,
    p256dh: ecdh.getPublicKey().toString('base64url'),
    auth: randomBytes(16).toString('base64url'),
  }
}

/** The plaintext of an aes128gcm push message (one record). */
export function decryptPush(body: Buffer, keys: BrowserKeys): string {
  const salt = body.subarray(0, 16)
  const idLength = body[20]!
  const senderPublic = body.subarray(21, 21 + idLength)
  const ciphertext = body.subarray(21 + idLength)
  const secret = keys.ecdh.computeSecret(senderPublic)
  const info = (text: string) => Buffer.concat([Buffer.from(text), Buffer.from([0])])
  const ikm = Buffer.from(
    hkdfSync(
      'sha256',
      secret,
      Buffer.from(keys.auth, 'base64url'),
      Buffer.concat([info('WebPush: info'), keys.ecdh.getPublicKey(), senderPublic]),
      32,
    ),
  )
  const key = Buffer.from(hkdfSync('sha256', ikm, salt, info('Content-Encoding: aes128gcm'), 16))
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, info('Content-Encoding: nonce'), 12))
  const decipher = createDecipheriv('aes-128-gcm', key, nonce)
  decipher.setAuthTag(ciphertext.subarray(-16))
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, -16)), decipher.final()])
  // The last record ends with the delimiter 0x02, then zero padding.
  return padded.subarray(0, padded.lastIndexOf(2)).toString('utf8')
}

/** The VAPID JWT's claims, after checking its ES256 signature with the key the header names. */
export async function verifyVapid(
  authorization: string,
): Promise<{ claims: { aud: string; sub: string; exp: number }; publicKey: string }> {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization)
  if (!match) throw new Error(`not a VAPID Authorization header: ${authorization}`)
  const [, jwt, publicKey] = match
  const [header, payload, signature] = jwt!.split('.')
  const key = await crypto.subtle.importKey(
    'raw',
    Buffer.from(publicKey!, 'base64url'),
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['verify'],
  )
  const valid = await crypto.subtle.verify(
    { name: 'ECDSA', hash: 'SHA-256' },
    key,
    Buffer.from(signature!, 'base64url'),
    new TextEncoder().encode(`${header}.${payload}`),
  )
  if (!valid) throw new Error('VAPID signature does not verify')
  return {
    claims: JSON.parse(Buffer.from(payload!, 'base64url').toString()),
    publicKey: publicKey!,
  }
}
