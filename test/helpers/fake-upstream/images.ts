/**
 * The fake provider's Images API (`POST /v1/images/generations`). Its behaviour comes from the upstream
 * model name ("fake-image?fewer=1") and from a marker in the prompt ("a cat [[status=500]]"), written
 * like a query string; the prompt's marker wins.
 *
 *   status=S    fail with HTTP status S; code=C adds an error code (content_policy_violation…),
 *               retryAfter=N a Retry-After of N seconds
 *   fewer=K     return K images whatever n asked for
 *   delay=MS    wait before answering
 *   hang=1      never answer (until the gateway goes away)
 *   drop=1      send the headers, then drop the connection before the body
 *   garbage=1   answer 200 with a body that is not JSON
 *   usage=1     report GPT Image token usage
 */
export async function imagesAnswer(
  request: Request,
  body: Record<string, unknown>,
): Promise<Response> {
  const options = imageOptions(String(body.model), String(body.prompt ?? ''))
  if (options.has('delay')) await Bun.sleep(Number(options.get('delay')))
  if (options.has('hang')) {
    while (!request.signal.aborted) await Bun.sleep(20)
    return new Response(null, { status: 499 })
  }
  const status = Number(options.get('status') ?? 200)
  if (status !== 200)
    return Response.json(
      {
        error: {
          message: `fake image failure ${status}`,
          type: 'invalid_request_error',
          param: null,
          code: options.get('code'),
        },
      },
      {
        status,
        headers: options.has('retryAfter') ? { 'retry-after': options.get('retryAfter')! } : {},
      },
    )
  if (options.has('drop'))
    return new Response(
      new ReadableStream({
        start: (controller) => controller.error(new Error('fake connection drop')),
      }),
    )
  if (options.has('garbage'))
    return new Response('<html>not json</html>', { headers: { 'content-type': 'text/html' } })
  const count = Number(options.get('fewer') ?? body.n ?? 1)
  const b64 = body.response_format === 'b64_json'
  const data = Array.from({ length: count }, (_, index) =>
    b64
      ? { b64_json: btoa(`fake image ${index}`), revised_prompt: body.prompt }
      : { url: `https://images.fake.test/${crypto.randomUUID()}.png`, revised_prompt: body.prompt },
  )
  const usage = {
    input_tokens: 10,
    input_tokens_details: { text_tokens: 10, image_tokens: 0 },
    output_tokens: 272 * count,
    total_tokens: 10 + 272 * count,
  }
  return Response.json({
    created: Math.floor(Date.now() / 1000),
    data,
    ...(options.has('usage') ? { usage } : {}),
  })
}

function imageOptions(model: string, prompt: string): URLSearchParams {
  const options = new URLSearchParams(model.split('?')[1] ?? '')
  const marker = /\[\[([^\]]*)\]\]/.exec(prompt)
  for (const [name, value] of new URLSearchParams(marker?.[1] ?? '')) options.set(name, value)
  return options
}
