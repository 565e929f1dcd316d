// The site server's request bodies, over HTTP: its forms and operator commands are refused past 1 MB
// before the body is read (413 payload_too_large, in the site's error shape), whoever sends them; the
// playground's chat, a conversation, may be as large as an API request (32 MB), and no larger. A body is
// nested at most 64 levels deep, as an API request's.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

describeWith('postgres', 'site request bodies', () => {
  let gw: TestGateway
  let siteUrl: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    siteUrl = gw.app.listen().siteUrl
  })
  afterAll(() => gw?.close())

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${siteUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: siteUrl, ...headers },
      body,
    })

  test('a sign-in, setup or operator body over 1 MB is 413 before it is read', async () => {
    const filler = 'a'.repeat(2 * 1024 * 1024)
    for (const [path, headers] of [
      ['/admin/v1/auth/email', {}],
      ['/admin/v1/session/link', {}],
      ['/admin/v1/setup', {}],
      ['/operator/v1/accounts', { authorization: `Bearer ${gw.app.operatorToken}` }],
    ] as const) {
      const response = await post(path, JSON.stringify({ email: filler }), headers)
      expect({ path, status: response.status }).toEqual({ path, status: 413 })
      expect(response.headers.get('x-service-error-code')).toBe('payload_too_large')
      const body = (await response.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('payload_too_large')
      expect(body.error.message).toContain('1 MB')
    }
  })

  test('a body within 1 MB reaches the route', async () => {
    const response = await post('/admin/v1/auth/email', JSON.stringify({ email: 'a'.repeat(4000) }))
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe('email')
  })

  test('a body nested past 64 levels is 400 at once, on every route that reads one', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`
    for (const [path, headers] of [
      ['/admin/v1/auth/email', {}],
      ['/admin/v1/keys', {}],
      ['/admin/v1/playground/chat', {}],
      ['/operator/v1/accounts', { authorization: `Bearer ${gw.app.operatorToken}` }],
    ] as const) {
      const started = performance.now()
      const response = await post(path, `{"email": ${deep}}`, headers)
      expect({ path, status: response.status }).toEqual({ path, status: 400 })
      const body = (await response.json()) as { error: { code: string; message: string } }
      expect(body.error).toMatchObject({
        code: 'invalid_request',
        message: 'Request body is nested more than 64 levels deep.',
      })
      expect(performance.now() - started).toBeLessThan(1_000)
    }
    const within = await post('/admin/v1/auth/email', JSON.stringify({ email: [[['a']]] }))
    expect(((await within.json()) as { error: { param: string } }).error.param).toBe('email')
  })

  test('the playground chat takes a conversation up to 32 MB', async () => {
    const messages = Array.from({ length: 12 }, () => ({
      role: 'user',
      content: 'a'.repeat(150_000),
    }))
    const within = await post('/admin/v1/playground/chat', JSON.stringify({ messages }))
    // Read, then refused for want of a session: not for its size.
    expect(within.status).toBe(401)
    const over = await post('/admin/v1/playground/chat', 'a'.repeat(33 * 1024 * 1024))
    expect(over.status).toBe(413)
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain('32 MB')
  })
})
