/**
 * The HMAC key that signs bot-check challenges: ALTCHA_HMAC_KEY when set, otherwise a random key kept in
 * DATA_DIR/altcha-hmac-key from the first start, so challenges issued before a restart still verify.
 * Several hosts serving the site must share it: set ALTCHA_HMAC_KEY.
 */
import { storedSecret } from '../../stores/stored-secrets.ts'
import { newSecret } from './secrets.ts'

export async function resolveAltchaKey(configured: string, dataDir: string): Promise<string> {
  return configured || storedSecret(dataDir, 'altchaKey', newSecret)
}
