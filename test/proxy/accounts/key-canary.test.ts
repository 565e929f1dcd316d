// The plaintext of a key exists once, in the creation response. Grep everything else for it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { setLogLevel } from '../../../proxy/core/log.ts'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

describeWith(['postgres', 'redis'], 'key plaintext canary', () => {
  let gw: TestGateway
  const captured: string[] = []
  const writes = { out: process.stdout.write, err: process.stderr.write }
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres' })
    const capture = (chunk: string | Uint8Array) => {
      captured.push(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk))
      return true
    }
    process.stdout.write = capture as typeof process.stdout.write
    process.stderr.write = capture as typeof process.stderr.write
    setLogLevel('debug')
  })
  afterAll(async () => {
    process.stdout.write = writes.out
    process.stderr.write = writes.err
    setLogLevel('error')
    await gw.close()
  })

  test('appears in no log line, no table, no error body and no upstream request', async () => {
    const { siteUrl } = gw.app.listen()
    const operator = (path: string, body?: unknown) =>
      fetch(`${siteUrl}/operator/v1${path}`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer test-operator-token',
          'content-type': 'application/json',
        },
        body: JSON.stringify(body ?? {}),
      }).then((response) => response.json() as Promise<Record<string, string>>)
    const { accountId } = await operator('/accounts', { creditNano: 5_000_000_000 })
    const created = await operator('/keys', { accountId: accountId! })
    const canary = created.key!
    expect(canary).toMatch(/^svc-live-/)

    const bodies: string[] = []
    const call = async (body: unknown, key = canary) => {
      const response = await gw.chat(key, body)
      bodies.push(await response.text(), JSON.stringify(Object.fromEntries(response.headers)))
      return response.status
    }
    const hello = [{ role: 'user', content: 'hello' }]
    expect(await call({ model: 'test/cheap', messages: hello })).toBe(200)
    expect(await call({ model: 'test/cheap', messages: hello, stream: true })).toBe(200)
    expect(await call({ model: 'nope', messages: hello })).toBe(404)
    expect(await call({ model: 'test/cheap' })).toBe(400)
    const altered = `${canary.slice(0, -1)}${canary.endsWith('x') ? 'y' : 'x'}`
    expect(await call({ model: 'test/cheap', messages: hello }, altered)).toBe(401)
    expect(await call({ model: 'test/cheap', messages: hello }, `Bearer ${canary}`)).toBe(401)
    await operator(`/keys/${created.id}/revoke`)
    expect(await call({ model: 'test/cheap', messages: hello })).toBe(401)
    await gw.app.gateway.writer.drain()

    const tables = await gw.app.gateway.sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
    expect(tables.length).toBeGreaterThan(4)
    const dumps: string[] = []
    for (const { table_name } of tables) {
      const rows = await gw.app.gateway.sql.unsafe(
        `SELECT to_jsonb(t)::text AS row FROM "${table_name}" t`,
      )
      dumps.push(...rows.map((row) => String(row.row)))
    }
    expect(dumps.some((row) => row.includes(created.id!))).toBe(true) // the key's record is there…
    const upstream = JSON.stringify(gw.upstream.requests)
    expect(upstream).toContain('sk-fake-provider') // …the provider's key went upstream…
    for (const [where, text] of [
      ['logs', captured.join('')],
      ['tables', dumps.join('\n')],
      ['responses', bodies.join('\n')],
      ['upstream requests', upstream],
    ] as const) {
      expect({ where, found: text.includes(canary) || text.includes(canary.slice(14)) }).toEqual({
        where,
        found: false,
      })
    }
    expect(captured.length).toBeGreaterThan(0)
  })
})
