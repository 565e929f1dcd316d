/**
 * Outgoing mail: through SMTP with nodemailer when `SMTP_URL` is set, otherwise appended to a local outbox
 * (`DATA_DIR/outbox.jsonl`, one JSON message per line) that the operator can read. Sign-in links, claim
 * confirmations, team invites and credit alerts all go through here.
 */
import { appendFile, mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Transporter } from 'nodemailer'

export type Mail = { to: string; subject: string; text: string; html?: string }

export interface Mailer {
  send(mail: Mail): Promise<void>
  readonly kind: 'smtp' | 'outbox'
}

export function createMailer(options: { smtpUrl: string; from: string; dataDir: string }): Mailer {
  if (options.smtpUrl) {
    // nodemailer is loaded with the first mail: API processes that never send one never carry it.
    let transport: Promise<Transporter> | undefined
    return {
      kind: 'smtp',
      async send(mail) {
        transport ??= import('nodemailer').then((nodemailer) =>
          nodemailer.default.createTransport(options.smtpUrl),
        )
        await (await transport).sendMail({ from: options.from, ...mail })
      },
    }
  }
  const file = outboxPath(options.dataDir)
  return {
    kind: 'outbox',
    async send(mail) {
      await mkdir(dirname(file), { recursive: true })
      await appendFile(
        file,
        `${JSON.stringify({ at: new Date().toISOString(), from: options.from, ...mail })}\n`,
        { mode: 0o600 },
      )
    },
  }
}

export function outboxPath(dataDir: string): string {
  return join(dataDir, 'outbox.jsonl')
}
