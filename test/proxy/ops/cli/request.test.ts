// The command line's request: a server that takes the connection and never answers does not keep the
// operator waiting past the timeout.
import { expect, test } from 'bun:test'
import { send } from '../../../../proxy/ops/admin-cli-request.ts'

test('a server that never answers is given up on after the timeout, naming the address', async () => {
  const silent = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: { data() {}, open() {} },
  })
  try {
    const base = `http://127.0.0.1:${silent.port}`
    const started = Date.now()
    const sent = await send(
      base,
      { value: 't', source: 'ADMIN_TOKEN' },
      { method: 'GET', path: '/providers' },
      300,
    )
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(sent.code).toBe(1)
    expect(JSON.parse(sent.stderr!).error).toEqual({
      code: 'unreachable',
      message: `No answer from ${base} within 0.3 s: is the server there stuck, or is SITE_URL another service?`,
    })
  } finally {
    silent.stop(true)
  }
})
