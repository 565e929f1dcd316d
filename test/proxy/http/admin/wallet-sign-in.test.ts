// Wallet sign-in with Sign-In with Ethereum, signed with local private keys: success, and each check
// refusing on its own: domain, URI, chain, nonce reuse, expiry, signature.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { admin } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { newWallet, signedMessage } from '../../../helpers/siwe.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }
type SignedIn = {
  account: { id: string; kind: string }
  role: string
  user: { id: string; wallet: string } | null
  purpose: string
}

describeWith('postgres', 'wallet sign-in', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '1000' },
    })
  })
  afterAll(() => gw.close())

  async function nonce(): Promise<{ nonce: string; domain: string; uri: string; chainId: number }> {
    const response = await admin(gw, 'GET', '/admin/v1/auth/wallet/nonce')
    expect(response.status).toBe(200)
    return (await response.json()) as {
      nonce: string
      domain: string
      uri: string
      chainId: number
    }
  }
  const signIn = (proof: { message: string; signature: string }) =>
    admin(gw, 'POST', '/admin/v1/auth/wallet', { body: proof })
  async function refused(response: Response, text: string): Promise<void> {
    expect(response.status).toBe(401)
    const body = (await response.json()) as ErrorBody
    expect(body.error).toMatchObject({ code: 'unauthorized', param: 'message' })
    expect(body.error.message).toContain(text)
  }

  test('the nonce comes with the domain, URI and chain the message must name', async () => {
    expect(await nonce()).toMatchObject({
      domain: 'site.test',
      uri: 'http://site.test',
      chainId: 1,
    })
  })

  test('a signed message signs in: the user is created by wallet address, with an account of their own', async () => {
    const wallet = newWallet()
    const response = await signIn(await signedMessage(wallet, (await nonce()).nonce))
    expect(response.status).toBe(200)
    const body = (await response.json()) as SignedIn
    expect(body).toMatchObject({
      account: { kind: 'identity' },
      role: 'owner',
      user: { wallet: wallet.address.toLowerCase() },
      purpose: 'wallet',
    })
    expect(response.headers.get('set-cookie')).toContain('HttpOnly')
    // The same wallet signs in again to the same user and account.
    const again = (await (
      await signIn(await signedMessage(wallet, (await nonce()).nonce))
    ).json()) as SignedIn
    expect(again.user!.id).toBe(body.user!.id)
    expect(again.account.id).toBe(body.account.id)
  })

  test('a nonce is single use', async () => {
    const wallet = newWallet()
    const proof = await signedMessage(wallet, (await nonce()).nonce)
    expect((await signIn(proof)).status).toBe(200)
    await refused(await signIn(proof), 'nonce is unknown, expired or already used')
    await refused(
      await signIn(await signedMessage(wallet, 'madeUpNonce12345'))!,
      'nonce is unknown',
    )
  })

  test('a message for another domain is refused', async () => {
    await refused(
      await signIn(
        await signedMessage(newWallet(), (await nonce()).nonce, { domain: 'evil.test' }),
      ),
      'the domain must be site.test',
    )
  })

  test('a message with a URI on another origin is refused', async () => {
    await refused(
      await signIn(
        await signedMessage(newWallet(), (await nonce()).nonce, { uri: 'https://evil.test/login' }),
      ),
      'the URI must be on http://site.test',
    )
  })

  test('a message for another chain is refused', async () => {
    await refused(
      await signIn(await signedMessage(newWallet(), (await nonce()).nonce, { chainId: 137 })),
      'the chain ID must be 1',
    )
  })

  test('an expired message is refused', async () => {
    const past = Date.now() - 10 * 60_000
    const proof = await signedMessage(newWallet(), (await nonce()).nonce, {
      issuedAt: new Date(past),
      expirationTime: new Date(past + 60_000),
    })
    await refused(await signIn(proof), 'the message expired')
  })

  test('a signature by another wallet, or a malformed one, is refused', async () => {
    const claimed = newWallet()
    const { message } = await signedMessage(claimed, (await nonce()).nonce)
    const forged = await newWallet().signMessage({ message })
    await refused(await signIn({ message, signature: forged }), 'the signature is not')
    await refused(await signIn({ message, signature: '0x1234' }), 'the signature is not')
    // The refused attempts left the nonce usable for the right signature.
    expect(
      (await signIn({ message, signature: await claimed.signMessage({ message }) })).status,
    ).toBe(200)
  })

  test('a body that is not a SIWE message is refused naming the field', async () => {
    const response = await signIn({ message: 'hello', signature: '0x00' })
    expect(response.status).toBe(400)
    expect(((await response.json()) as ErrorBody).error).toMatchObject({
      code: 'invalid_request',
      param: 'message',
    })
  })
})
