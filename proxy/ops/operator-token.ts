/**
 * The operator API's bearer token: ADMIN_TOKEN when set, otherwise a random token the server keeps in
 * DATA_DIR/admin-token from its first start (readable by the operator's `bun run admin`, mode 0600).
 */
import { storedSecret } from '../stores/stored-secrets.ts'
import { randomBase58 } from '../core/api-key.ts'

export async function resolveOperatorToken(configured: string, dataDir: string): Promise<string> {
  return configured || storedSecret(dataDir, 'operatorToken', () => `adm_${randomBase58(32)}`)
}
