/** Headers of a JSON request to an OpenAI-compatible provider: its key as a bearer token, when it takes one. */
export function bearerHeaders(apiKey: string | undefined, accept: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  return headers
}
