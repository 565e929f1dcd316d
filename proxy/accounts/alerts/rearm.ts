/** Re-arming a credit alert after a credit (see credit-alerts.ts); kept apart so crediting needs no push code. */
import type { Sql } from 'postgres'

/**
 * Arms the account's alert again when its available balance is back at or above the threshold (called
 * after a credit). One UPDATE that changes nothing when the alert is armed or has no threshold.
 */
export async function rearmAlert(
  sql: Sql,
  accountId: string,
  availableNano: number,
): Promise<void> {
  await sql`
    UPDATE accounts SET alert_armed = true
    WHERE id = ${accountId} AND NOT alert_armed AND alert_threshold_nano <= ${availableNano}`
}
