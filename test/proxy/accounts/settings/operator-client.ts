/** Calls the operator API of a test gateway's site server, and reads refusals. */
import { expect } from 'bun:test'
import type { ErrorCode } from '../../../../shared/errors.ts'
import type { TestGateway } from '../../../helpers/gateway.ts'

export type OperatorAnswer = { status: number; body: Record<string, any> }

export async function operator(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<OperatorAnswer> {
  const response = await gw.app.site.handle(
    new Request(`http://site.test/operator/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${gw.app.operatorToken}`,
        'content-type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

/** Expects a refusal and returns its message. */
export function expectRefusal(
  answer: OperatorAnswer,
  status: number,
  code: ErrorCode,
  param?: string,
): string {
  expect({ status: answer.status, code: answer.body.error?.code }).toEqual({ status, code })
  if (param !== undefined) expect(answer.body.error.param).toBe(param)
  return answer.body.error.message as string
}

export const hello = [{ role: 'user', content: 'hello' }]

/** A chat request's status, error code and serving model. */
export async function chatOutcome(
  gw: TestGateway,
  key: string,
  model: string,
  messages: unknown = hello,
) {
  const response = await gw.chat(key, { model, messages })
  const body = (await response.json()) as { error?: { code: string } }
  return {
    status: response.status,
    code: body.error?.code,
    model: response.headers.get('x-service-model'),
    retryAfter: response.headers.get('retry-after'),
  }
}
