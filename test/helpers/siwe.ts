/** Sign-In with Ethereum messages signed with local private keys (viem), for the wallet tests. */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { createSiweMessage, type SiweMessage } from 'viem/siwe'

export function newWallet(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey())
}

/** A signed message for the site (defaults: domain site.test, URI http://site.test, chain 1, issued now, 5 minutes). */
export async function signedMessage(
  wallet: PrivateKeyAccount,
  nonce: string,
  fields: Partial<SiweMessage> = {},
): Promise<{ message: string; signature: string }> {
  const now = Date.now()
  const message = createSiweMessage({
    address: wallet.address,
    chainId: 1,
    domain: 'site.test',
    uri: 'http://site.test',
    version: '1',
    nonce,
    issuedAt: new Date(now),
    expirationTime: new Date(now + 5 * 60_000),
    statement: 'Sign in to Model Gateway.',
    ...fields,
  })
  return { message, signature: await wallet.signMessage({ message }) }
}
