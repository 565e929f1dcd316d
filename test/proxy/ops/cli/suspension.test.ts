// `bun run admin -- account suspend|unsuspend` against a listening test gateway, with the effect on the
// next API request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'

const hello = [{ role: 'user', content: 'hello' }]

describeWith('postgres', 'suspension commands of bun run admin', () => {
  let gw: TestGateway
  let siteUrl: string

  const admin = (...args: string[]) =>
    runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: gw.app.operatorToken }, args)

  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    siteUrl = gw.app.listen().siteUrl
  })
  afterAll(() => gw?.close())

  test('account suspend refuses requests at once; account unsuspend lifts it', async () => {
    const accountId = await gw.account('10')
    const { key } = await gw.key(accountId)
    const chat = async () => {
      const response = await gw.chat(key, { model: 'test/cheap', messages: hello })
      return { status: response.status, code: response.headers.get('x-service-error-code') }
    }
    expect((await chat()).status).toBe(200)

    const suspended = await admin(
      'account',
      'suspend',
      accountId,
      '--reason',
      'operator',
      '--note',
      'card testing',
    )
    expect(suspended.code).toBe(0)
    expect(suspended.json).toMatchObject({
      accountId,
      status: 'suspended',
      reason: 'operator',
      note: 'card testing',
    })
    expect(await chat()).toEqual({ status: 403, code: 'account_suspended' })

    const lifted = await admin('account', 'unsuspend', accountId)
    expect(lifted.json).toMatchObject({ accountId, status: 'active', reason: null })
    expect((await chat()).status).toBe(200)
  })

  test('a missing reason is a usage error; an unknown one is refused by the server', async () => {
    const accountId = await gw.account('1')
    expect((await admin('account', 'suspend', accountId)).code).toBe(2)
    const unknown = await admin('account', 'suspend', accountId, '--reason', 'whim')
    expect(unknown.code).toBe(1)
    expect(JSON.parse(unknown.stderr).error).toMatchObject({
      code: 'invalid_request',
      param: 'reason',
    })
  })
})
