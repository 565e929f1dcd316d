/**
 * `bun run admin -- <command>`: the operator's command line, a thin client of the operator API of a
 * running server (SITE_URL, default http://127.0.0.1:<SITE_PORT>), authenticated by ADMIN_TOKEN or the
 * token the server wrote under DATA_DIR. Prints JSON; exits 1 with the server's error on failure.
 * Operators type dollars; the requests carry the API's own fields (the shared schemas: integer nano-USD,
 * `rpmLimit`, `allowedModels`, …), the same the dashboard sends.
 */
import { parseArgs } from 'node:util'
import { loadConfig } from '../core/config.ts'
import { storedSecretPath } from '../stores/stored-secrets.ts'
import { options, UsageError } from './admin-cli-args.ts'
import { route } from './admin-cli-routes.ts'

const usage = `Usage: bun run admin -- <command> [options]

  account create [--credit-usd N]
  account show --account ID
  credit --account ID --usd N [--reason TEXT]
  account suspend ACCOUNT_ID --reason chargeback|sanctions|abuse|operator [--note TEXT]
  account unsuspend ACCOUNT_ID
  payments list [--state pending|credited|failed|reversed|held] [--account ID]
  payments release PAYMENT_ID   (credit a held payment)
  payments reject PAYMENT_ID    (a held payment is never credited)
  account set ACCOUNT_ID [--rpm N|none] [--tpm N|none] [--concurrency N|none]
             (account-level limits shared by its keys; none: the default; 0: no limit)
  account limits ACCOUNT_ID
  link replace ACCOUNT_ID   (a new dashboard link for an accountless account, shown once; the old one ends)
  link revoke ACCOUNT_ID    (the dashboard link opens nothing any more)
  key create --account ID [--name TEXT] [--rpm N] [--tpm N] [--concurrency N]
             [--daily-usd N|none] [--monthly-usd N|none] [--models a,b]
  key update KEY_ID [--name TEXT] [--guardrail ID|none] [--models a,b|none] [--rpm N|none] [--tpm N|none]
             [--concurrency N|none] [--daily-usd N|none] [--monthly-usd N|none]
  key revoke --id ID

  preset set ACCOUNT_ID SLUG --model M [--fallbacks a,b] [--temperature X] [--top-p X]
             [--max-tokens N] [--stop a,b]
  preset list ACCOUNT_ID
  preset delete ACCOUNT_ID SLUG

  routing set ACCOUNT_ID [--models a,b|none] [--providers p,q|none]   (a list left out stays as it is)
  routing clear ACCOUNT_ID

  guardrail create ACCOUNT_ID --name TEXT [--models a,b] [--budget-usd N] [--filters JSON]
  guardrail update GUARDRAIL_ID [--name TEXT] [--models a,b|none] [--budget-usd N|none] [--filters JSON]
  guardrail list ACCOUNT_ID
  guardrail delete GUARDRAIL_ID   (its keys keep working without it)

  provider list
  provider pause PROVIDER_ID (--minutes N | --until ISO-TIME) [--reason TEXT]
  provider resume PROVIDER_ID

  support list [--status open|answered|closed]
  support show TICKET_ID
  support answer TICKET_ID --body TEXT [--no-mail]   (e-mails the customer unless --no-mail)
  support close TICKET_ID

Environment: SITE_URL (default http://127.0.0.1:$SITE_PORT), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options,
    allowPositionals: true,
    strict: true,
  })
  if (values.help) {
    console.log(usage)
    return 0
  }
  const request = route(positionals, values)
  const config = loadConfig()
  const base = process.env.SITE_URL?.replace(/\/$/, '') ?? `http://127.0.0.1:${config.SITE_PORT}`
  const tokenFile = Bun.file(storedSecretPath(config.DATA_DIR, 'operatorToken'))
  const token =
    config.ADMIN_TOKEN || ((await tokenFile.exists()) ? (await tokenFile.text()).trim() : '')
  if (!token)
    throw new UsageError(
      `No operator token: set ADMIN_TOKEN, or start the server once so it writes ${tokenFile.name}`,
    )
  let response: Response
  try {
    response = await fetch(`${base}/operator/v1${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    })
  } catch (error) {
    console.error(
      JSON.stringify({
        error: {
          code: 'unreachable',
          message: `No server at ${base}: ${(error as Error).message}`,
        },
      }),
    )
    return 1
  }
  const text = await response.text()
  if (response.ok) {
    console.log(JSON.stringify(JSON.parse(text), null, 2))
    return 0
  }
  console.error(text)
  return 1
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`${(error as Error).message}\n\n${usage}`)
      process.exit(2)
    }
    console.error(error)
    process.exit(1)
  },
)
