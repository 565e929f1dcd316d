/** Solving the site's bot-check challenge as the `altcha` widget does (altcha-lib's solver, real proof of work). */
import { solveChallenge, type Challenge } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import { admin } from './admin.ts'
import type { TestGateway } from './gateway.ts'

/** Settings that keep the proof of work small in tests, which set up many accounts from one address. */
export const cheapBotCheck = {
  ALTCHA_COST: '1',
  ALTCHA_MAX_COUNTER: '50',
  ACCOUNTLESS_SETUPS_PER_ADDRESS_PER_DAY: '1000',
}

export async function fetchChallenge(gw: TestGateway): Promise<Challenge> {
  const response = await admin(gw, 'GET', '/admin/v1/setup/challenge')
  if (response.status !== 200)
    throw new Error(`challenge: ${response.status} ${await response.text()}`)
  return (await response.json()) as Challenge
}

/** The widget's payload: base64 JSON of the challenge and its solution. */
export async function solve(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey })
  if (!solution) throw new Error('challenge not solved')
  return btoa(
    JSON.stringify({
      challenge: { parameters: challenge.parameters, signature: challenge.signature },
      solution,
    }),
  )
}

export async function solvedPayload(gw: TestGateway): Promise<string> {
  return solve(await fetchChallenge(gw))
}
