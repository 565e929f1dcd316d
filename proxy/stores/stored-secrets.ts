/**
 * Secrets the service keeps under DATA_DIR when their setting is empty: the operator token, the bot-check
 * signing key, the browser-push key pair. Each is created once, atomically: written aside (mode 0600) and
 * linked into place, which fails for all but the first of processes starting together on one DATA_DIR;
 * those read what the first wrote, as every later start does. No reader ever sees half a file.
 */
import { link, mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The file of each secret under DATA_DIR. */
export const STORED_SECRETS = {
  operatorToken: 'admin-token',
  altchaKey: 'altcha-hmac-key',
  vapidKeys: 'vapid-keys.json',
} as const
export type StoredSecret = keyof typeof STORED_SECRETS

export function storedSecretPath(dataDir: string, name: StoredSecret): string {
  return join(dataDir, STORED_SECRETS[name])
}

/** The secret kept under `dataDir`, made by `create` if there is none yet. */
export async function storedSecret(
  dataDir: string,
  name: StoredSecret,
  create: () => string | Promise<string>,
): Promise<string> {
  const path = storedSecretPath(dataDir, name)
  const file = Bun.file(path)
  if (await file.exists()) return (await file.text()).trim()
  await mkdir(dataDir, { recursive: true })
  // Unique per call: two calls in one process must not share (and delete) each other's draft.
  const draft = `${path}.${process.pid}.${crypto.randomUUID()}`
  await writeFile(draft, `${await create()}\n`, { mode: 0o600 })
  try {
    await link(draft, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await rm(draft, { force: true })
  }
  return (await Bun.file(path).text()).trim()
}
