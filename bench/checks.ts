/**
 * Light correctness checks around the load: one request of each kind to every target before it
 * (status 200; through the gateway also `usage.cost` and the closing `data: [DONE]`), and after it the
 * account's live state (every hold ended, live balance against the ledger); and a summary of the
 * gateway's warnings and errors.
 */
import type { AccountState, OperatorClient } from './gateway.ts'

/** A request as the load tool sends it. */
export type Probe = { url: string; body: string; headers: Record<string, string> }

/** Sends `probe` once and throws unless the answer is what a healthy target gives. */
export async function checkTarget(
  target: string,
  probe: Probe,
  stream: boolean,
  expectCost: boolean,
): Promise<void> {
  const response = await fetch(probe.url, {
    method: 'POST',
    body: probe.body,
    headers: probe.headers,
  })
  const text = await response.text()
  const what = `${target}, ${stream ? 'streaming' : 'non-streaming'}`
  if (response.status !== 200)
    throw new Error(`${what}: status ${response.status}: ${text.slice(0, 500)}`)
  if (stream) {
    if (!text.trimEnd().endsWith('data: [DONE]'))
      throw new Error(`${what}: the stream does not end with "data: [DONE]":\n${text.slice(-500)}`)
    return
  }
  const json = JSON.parse(text) as { usage?: { cost?: unknown } }
  if (expectCost && typeof json.usage?.cost !== 'number')
    throw new Error(`${what}: no usage.cost in the answer: ${text.slice(0, 500)}`)
}

/** The account state once the gateway has settled everything, and whether it is consistent. */
export type FinalState = {
  state: AccountState
  holdsEnded: boolean
  ledgerMatches: boolean
  waitedMs: number
}

/** Polls the account until no hold is open and the ledger caught up with the live balance, or `timeoutMs`. */
export async function settledAccount(
  operator: OperatorClient,
  accountId: string,
  timeoutMs: number,
): Promise<FinalState> {
  const started = Date.now()
  await Bun.sleep(500)
  for (;;) {
    const state = await operator.account(accountId)
    const holdsEnded = state.heldNano === 0 && state.inFlight === 0
    const ledgerMatches = state.balanceNano === state.ledgerBalanceNano
    const waitedMs = Date.now() - started
    if ((holdsEnded && ledgerMatches) || waitedMs >= timeoutMs)
      return { state, holdsEnded, ledgerMatches, waitedMs }
    await Bun.sleep(250)
  }
}

/** A log line as `level: msg` (structured) or its first 200 characters. */
function logKey(line: string): string {
  try {
    const entry = JSON.parse(line) as { level?: string; msg?: string }
    return `${entry.level}: ${entry.msg}`
  } catch {
    // Not a structured log line; counted as it is.
    return line.slice(0, 200)
  }
}

/**
 * Warning and error lines the gateway wrote once it served (past `startupBytes` of its log), and the
 * notices it wrote while starting (a setting it runs without, such as mail written to a file), which
 * say how it was configured rather than that something went wrong. Info lines (its addresses) aside.
 */
export async function gatewayLogProblems(
  logFile: string,
  startupBytes = 0,
): Promise<{ lines: number; samples: string[]; notices: string[] }> {
  const text = await Bun.file(logFile).text()
  const bytes = Buffer.from(text)
  const problems = (part: string) =>
    part.split('\n').filter((line) => line.trim() && !/"level":"(info|debug)"/.test(line))
  const notices = problems(bytes.subarray(0, startupBytes).toString())
  const lines = problems(bytes.subarray(startupBytes).toString())
  const counts = new Map<string, number>()
  for (const line of lines) counts.set(logKey(line), (counts.get(logKey(line)) ?? 0) + 1)
  return {
    lines: lines.length,
    samples: [...counts].slice(0, 8).map(([key, count]) => `${key} (×${count})`),
    notices: notices.map(logKey),
  }
}
