/**
 * `bun run admin -- <command>`: the operator's command line, a thin client of the operator API of a
 * running server (SITE_URL, default http://127.0.0.1:<SITE_PORT>), authenticated by ADMIN_TOKEN or the
 * token the server wrote under DATA_DIR. Prints JSON; exits 1 with a JSON error on failure (the
 * server's, or admin-cli-request.ts's when there is no usable answer), 2 on a usage or configuration
 * mistake.
 * Operators type dollars; the requests carry the API's own fields (the shared schemas: integer nano-USD,
 * `rpmLimit`, `allowedModels`, …), the same the dashboard sends.
 */
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../core/config.ts'
import { storedSecretPath } from '../stores/stored-secrets.ts'
import { joinNegativeNumbers, options, UsageError, type Values } from './admin-cli-args.ts'
import { send } from './admin-cli-request.ts'
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
    args: joinNegativeNumbers(Bun.argv.slice(2)),
    options,
    allowPositionals: true,
    strict: true,
  })
  words = positionals
  if (values.help || positionals[0] === 'help') {
    const about = positionals[0] === 'help' ? positionals.slice(1) : positionals
    console.log(about.length > 0 ? usageOf(about) : usage)
    return 0
  }
  const stray = strayOption(positionals, values)
  if (stray) throw new UsageError(`Unknown option for ${stray.command}: --${stray.option}`)
  const request = route(positionals, values)
  const config = loadConfig()
  const base = siteBase(process.env.SITE_URL, config.SITE_PORT)
  const tokenFile = Bun.file(storedSecretPath(config.DATA_DIR, 'operatorToken'))
  const token = config.ADMIN_TOKEN
    ? { value: config.ADMIN_TOKEN, source: 'ADMIN_TOKEN' }
    : {
        value: (await tokenFile.exists()) ? (await tokenFile.text()).trim() : '',
        source: tokenFile.name!,
      }
  if (!token.value)
    throw new UsageError(
      `No operator token: ${tokenFile.name} does not exist. Set ADMIN_TOKEN to the one the server was started with, or DATA_DIR to the server's data directory (a server started without ADMIN_TOKEN writes its token there at first start)`,
    )
  const sent = await send(base, token, request)
  if (sent.stdout) console.log(sent.stdout)
  if (sent.stderr) console.error(sent.stderr)
  return sent.code
}

/** Where the site server is: SITE_URL (an http or https URL, without a trailing slash), else SITE_PORT on this host. */
function siteBase(siteUrl: string | undefined, sitePort: number): string {
  if (!siteUrl) return `http://127.0.0.1:${sitePort}`
  if (!/^https?:\/\/[^/?#\s]/i.test(siteUrl) || !URL.canParse(siteUrl))
    throw new UsageError(
      `SITE_URL must be the site server's http:// or https:// URL, such as http://127.0.0.1:8081 (got ${siteUrl})`,
    )
  return siteUrl.replace(/\/+$/, '')
}

/** The command's words (the first raw argument until they are read): a usage error shows their group's usage. */
let words: string[] = Bun.argv.slice(2, 3)

/** The usage lines of the command group `words` starts with (all of them for an unknown group). */
function usageOf(command: string[]): string {
  const entries = usage.split(/\n(?= {2}[a-z])/)
  const own = entries.filter((entry) => entry.trim().split(/\s/)[0] === command[0])
  return own.length > 0 ? `Usage: bun run admin -- <command> [options]\n\n${own.join('\n')}` : usage
}

/**
 * An option the command `words` does not take (one of another command's, which would otherwise be
 * dropped: `key create --guardrail` made a key without it), read from the command's usage line so that
 * what is listed and what is accepted are one.
 */
function strayOption(words: string[], values: Values): { command: string; option: string } | null {
  for (const entry of usage.split(/\n(?= {2}[a-z])/)) {
    const command = /^\s*([a-z]+(?: [a-z]+)*)/.exec(entry)?.[1]
    if (!command || words.slice(0, command.split(' ').length).join(' ') !== command) continue
    const taken = new Set([...entry.matchAll(/--([a-z-]+)/g)].map((match) => match[1]))
    const option = Object.keys(values).find((name) => name !== 'help' && !taken.has(name))
    return option ? { command, option } : null
  }
  return null
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      // The parser's own text for an unknown option goes on about positional arguments.
      const unknown = /^Unknown option '([^']+)'/.exec((error as Error).message)?.[1]
      const message = unknown ? `Unknown option: ${unknown}` : (error as Error).message
      console.error(`${message}\n\n${usageOf(words)}`)
      process.exit(2)
    }
    if (error instanceof ConfigError) {
      console.error(error.message)
      process.exit(2)
    }
    console.error(error)
    process.exit(1)
  },
)
