/**
 * The proof-of-work bot check of accountless setup (ALTCHA): a signed challenge the `altcha` widget
 * solves in the browser, and the check of its solved payload. A solution is single use until its
 * challenge expires: its signature is recorded in `spent_challenges` with INSERT … ON CONFLICT DO NOTHING,
 * so of two concurrent uses exactly one gets the row.
 *
 * Deterministic mode: the server picks the answer (a counter) and signs the derived key, so checking a
 * solution costs one HMAC, while finding it costs the client about half the counter range of PBKDF2 runs.
 */
import {
  createChallenge,
  randomInt,
  verifySolution,
  type Challenge,
  type Solution,
} from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import type { Sql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'

export const ALTCHA_ALGORITHM = 'PBKDF2/SHA-256'

export type BotCheckDeps = {
  sql: Sql
  clock: { now(): number }
  altchaKey: string
  config: { ALTCHA_CHALLENGE_TTL_MS: number; ALTCHA_COST: number; ALTCHA_MAX_COUNTER: number }
}

export async function issueChallenge(
  deps: BotCheckDeps,
): Promise<{ parameters: Record<string, unknown>; signature: string }> {
  const { ALTCHA_CHALLENGE_TTL_MS, ALTCHA_COST, ALTCHA_MAX_COUNTER } = deps.config
  const challenge = await createChallenge({
    algorithm: ALTCHA_ALGORITHM,
    cost: ALTCHA_COST,
    counter: randomInt(Math.floor(ALTCHA_MAX_COUNTER / 2), ALTCHA_MAX_COUNTER),
    deriveKey,
    expiresAt: new Date(deps.clock.now() + ALTCHA_CHALLENGE_TTL_MS),
    hmacSignatureSecret: deps.altchaKey,
    hmacKeySignatureSecret: keySecret(deps.altchaKey),
  })
  return { parameters: { ...challenge.parameters }, signature: challenge.signature! }
}

/** Checks a solved payload and spends it; throws the refusal (the field is `altcha`). */
export async function spendSolution(deps: BotCheckDeps, payload: string): Promise<void> {
  const solved = decode(payload)
  if (!solved)
    throw new ServiceError(
      'invalid_request',
      "altcha: not a solved bot-check payload (expected the widget's base64 JSON of challenge and solution)",
      { param: 'altcha' },
    )
  const expiresAt = solved.challenge.parameters.expiresAt
  // Every challenge this server issues expires; one without an expiry was not made here.
  if (typeof expiresAt !== 'number')
    throw refusal('the challenge has no expiry, so it was not issued here')
  if (expiresAt * 1000 <= deps.clock.now()) throw refusal('the challenge expired')
  let result
  try {
    result = await verifySolution({
      challenge: solved.challenge,
      solution: solved.solution,
      deriveKey,
      hmacSignatureSecret: deps.altchaKey,
      hmacKeySignatureSecret: keySecret(deps.altchaKey),
    })
  } catch {
    throw refusal('the challenge is malformed')
  }
  if (result.expired) throw refusal('the challenge expired')
  if (result.invalidSignature)
    throw refusal('the challenge was not issued by this server (bad signature)')
  if (!result.verified) throw refusal('the solution is wrong')
  await deps.sql`DELETE FROM spent_challenges WHERE expires_at <= ${new Date(deps.clock.now())}`
  const spent = await deps.sql`
    INSERT INTO spent_challenges (signature, expires_at) VALUES (${solved.challenge.signature}, ${new Date(expiresAt * 1000)})
    ON CONFLICT DO NOTHING RETURNING 1`
  if (spent.length === 0) throw refusal('this solution was already used')
}

type Solved = { challenge: Challenge & { signature: string }; solution: Solution }

function decode(payload: string): Solved | undefined {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'))
  } catch {
    return undefined
  }
  const solved = value as Partial<Solved> | null
  if (!solved || typeof solved !== 'object') return undefined
  const { challenge, solution } = solved
  if (
    !challenge ||
    typeof challenge !== 'object' ||
    !challenge.parameters ||
    typeof challenge.parameters !== 'object'
  )
    return undefined
  if (
    typeof challenge.signature !== 'string' ||
    challenge.signature.length === 0 ||
    challenge.signature.length > 256
  )
    return undefined
  if (!solution || typeof solution !== 'object') return undefined
  return solved as Solved
}

function refusal(reason: string): ServiceError {
  return new ServiceError(
    'forbidden',
    `altcha: bot check failed: ${reason}. Solve a new challenge.`,
    { param: 'altcha' },
  )
}

/** The key-signature secret, derived from the one HMAC key so that a single secret is configured. */
function keySecret(altchaKey: string): string {
  return new Bun.CryptoHasher('sha256', altchaKey).update('altcha-key-signature').digest('hex')
}
