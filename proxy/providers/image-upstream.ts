/**
 * Sending an image request to an OpenAI-style provider (`{baseUrl}/images/generations`) and saying what
 * is known afterwards. The distinction that matters is whether images may have been generated (and
 * billed by the provider): only a connection refused before anything was sent allows the next route.
 * Every other failure after sending ends the attempt, since a second generation could be billed twice.
 * The client's disconnecting does not abort the call: the outcome is still needed for the charge.
 */
import type { Route } from '../core/catalog/catalog-types.ts'
import { bearerHeaders } from './openai/headers.ts'

export type ImageOutcome =
  /** The provider answered with images: `returned` of them. */
  | { kind: 'images'; route: Route; json: Record<string, unknown>; returned: number }
  /** The provider answered with an error status: nothing was generated. */
  | { kind: 'refused'; route: Route; status: number; body: string; headers: Headers }
  /** No route could be connected to: nothing was sent. */
  | { kind: 'unreachable'; detail: string }
  /** Sent, but the answer was lost (timeout, broken connection, unreadable body): images may exist. */
  | { kind: 'unknown'; route: Route; reason: string }

/** Errors that mean the connection was never made, so the request was not sent. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ConnectionRefused',
  'ENOTFOUND',
  'EAI_AGAIN',
  'FailedToOpenSocket',
  'UnableToConnect',
])

export async function sendImageRequest(
  routes: Route[],
  body: Record<string, unknown>,
  deadlineMs: number,
): Promise<ImageOutcome> {
  const refusedConnections: string[] = []
  for (const route of routes) {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), Math.max(0, deadlineMs - Date.now()))
    try {
      return await attempt(route, body, controller.signal)
    } catch (error) {
      if (controller.signal.aborted)
        return { kind: 'unknown', route, reason: 'did not answer in time' }
      const code = (error as { code?: unknown }).code
      if (typeof code === 'string' && NOT_SENT.has(code)) {
        refusedConnections.push(`${route.provider.id}: ${code}`)
        continue
      }
      return { kind: 'unknown', route, reason: 'lost the connection before answering' }
    } finally {
      clearTimeout(timer)
    }
  }
  return { kind: 'unreachable', detail: refusedConnections.join(', ') }
}

async function attempt(
  route: Route,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ImageOutcome> {
  const response = await fetch(`${route.provider.baseUrl}/images/generations`, {
    method: 'POST',
    headers: bearerHeaders(route.provider.apiKey, 'application/json'),
    body: JSON.stringify({ ...body, model: route.upstreamModel }),
    signal,
  })
  if (response.status >= 400) {
    // The status already says nothing was generated; a body that breaks off changes nothing.
    const text = await response.text().catch(() => '')
    return {
      kind: 'refused',
      route,
      status: response.status,
      body: text,
      headers: response.headers,
    }
  }
  let text: string
  try {
    text = await response.text()
  } catch (error) {
    if (signal.aborted) throw error
    return { kind: 'unknown', route, reason: 'broke off its answer' }
  }
  const json = parseImages(text)
  if (!json) return { kind: 'unknown', route, reason: 'sent an answer that could not be read' }
  return { kind: 'images', route, json, returned: (json.data as unknown[]).length }
}

/** `{created, data: [...]}` as the Images API writes it, or undefined. */
function parseImages(text: string): Record<string, unknown> | undefined {
  try {
    const json = JSON.parse(text) as unknown
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined
    const data = (json as { data?: unknown }).data
    return Array.isArray(data) ? (json as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
