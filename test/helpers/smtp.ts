/**
 * A real SMTP server on 127.0.0.1 for tests (`smtp-server`): it accepts every message and keeps it, so a
 * test can read the link a mail carries. Point the gateway's SMTP_URL at `url`. `refusing(n)` makes it
 * answer the next n messages with a temporary failure (451), as a mail server under load does.
 */
import { SMTPServer } from 'smtp-server'

export type ReceivedMail = { to: string[]; raw: string; text: string }

export type TestSmtp = {
  url: string
  messages: ReceivedMail[]
  /** The next message to `to` (waits for it up to `timeoutMs`). */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>
  /** Refuses the next `count` messages with 451 (a temporary failure); `Infinity` until told otherwise. */
  refusing(count: number): void
  close(): Promise<void>
}

export async function startSmtpServer(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = []
  const read = new Set<ReceivedMail>()
  let refuse = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (refuse > 0) {
          refuse -= 1
          return callback(
            Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 }),
          )
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        messages.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          text: decodeQuotedPrintable(raw),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as { port: number }
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async next(to, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const found = messages.find((message) => !read.has(message) && message.to.includes(to))
        if (found) {
          read.add(found)
          return found
        }
        await Bun.sleep(10)
      }
      throw new Error(`no mail to ${to} within ${timeoutMs} ms`)
    },
    refusing(count) {
      refuse = count
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The first link in a mail to the given path, e.g. `/auth/email`. */
export function linkIn(mail: ReceivedMail, path = '/auth/email'): URL {
  const match = new RegExp(
    `https?://[^\\s"<>]+${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_%-]+(?:&next=[^\\s"<>&]+)?`,
  ).exec(mail.text)
  if (!match) throw new Error(`no ${path} link in the mail:\n${mail.text}`)
  return new URL(match[0])
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}
