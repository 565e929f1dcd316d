/**
 * The operator API's bearer token: ADMIN_TOKEN when set, otherwise a random token the server writes to
 * DATA_DIR/admin-token at first start (readable by the operator's `bun run admin`, mode 0600).
 */
import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBase58 } from '../keys/api-key.ts'

export function operatorTokenPath(dataDir: string): string {
  return join(dataDir, 'admin-token')
}

export async function resolveOperatorToken(configured: string, dataDir: string): Promise<string> {
  if (configured) return configured
  const path = operatorTokenPath(dataDir)
  const file = Bun.file(path)
  if (await file.exists()) return (await file.text()).trim()
  await mkdir(dataDir, { recursive: true })
  const token = `adm_${randomBase58(32)}`
  await Bun.write(path, `${token}\n`)
  await chmod(path, 0o600)
  return token
}
