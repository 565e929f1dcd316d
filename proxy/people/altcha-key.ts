/**
 * The HMAC key that signs bot-check challenges: ALTCHA_HMAC_KEY when set, otherwise a random key written
 * to DATA_DIR/altcha-hmac-key at first start (mode 0600) and read back at every later start, so challenges
 * issued before a restart still verify. Several hosts serving the site must share it: set ALTCHA_HMAC_KEY.
 */
import { link, mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { newSecret } from './secrets.ts'

export function altchaKeyPath(dataDir: string): string {
  return join(dataDir, 'altcha-hmac-key')
}

export async function resolveAltchaKey(configured: string, dataDir: string): Promise<string> {
  if (configured) return configured
  const path = altchaKeyPath(dataDir)
  const file = Bun.file(path)
  if (await file.exists()) return (await file.text()).trim()
  await mkdir(dataDir, { recursive: true })
  // Written aside, then linked into place: link fails if another process got there first, and a reader
  // never sees a half-written file.
  // Unique per call: two calls in one process must not share (and delete) each other's draft.
  const draft = `${path}.${process.pid}.${crypto.randomUUID()}`
  await writeFile(draft, `${newSecret()}\n`, { mode: 0o600 })
  try {
    await link(draft, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await rm(draft, { force: true })
  }
  return (await Bun.file(path).text()).trim()
}
