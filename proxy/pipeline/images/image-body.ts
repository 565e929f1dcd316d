/**
 * The body of `POST /v1/images/generations`, as the OpenAI Images API defines it: the envelope (fields,
 * types, ranges) and the price of what it asks for. Fields the gateway does not know are refused by
 * name; streaming image generation is refused, since a partial image cannot be priced or held.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { ServiceError } from '../../../shared/errors.ts'
import type { ImageModel } from '../../core/catalog/catalog-types.ts'
import { envelope } from '../validate.ts'

/** OpenAI's limit for GPT Image prompts; the other image models accept less and say so themselves. */
export const MAX_PROMPT_CHARS = 32_000
export const MAX_IMAGES = 10

const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

export const ImageRequest = Type.Object({
  model: Type.String(),
  prompt: Type.String({ minLength: 1 }),
  n: nullable(Type.Integer()),
  size: nullable(Type.String()),
  quality: nullable(Type.String()),
  response_format: nullable(Type.String()),
  output_format: nullable(Type.String()),
  output_compression: nullable(Type.Integer()),
  background: nullable(Type.String()),
  moderation: nullable(Type.String()),
  style: nullable(Type.String()),
  user: nullable(Type.String()),
  safety_identifier: nullable(Type.String()),
  stream: nullable(Type.Boolean()),
  partial_images: nullable(Type.Integer()),
})
export type ImageRequest = Static<typeof ImageRequest>

const invalid = (param: string, message: string) =>
  new ServiceError('invalid_request', `${param}: ${message}`, { param })

function rules(body: ImageRequest): ServiceError | undefined {
  if (body.prompt.length > MAX_PROMPT_CHARS)
    return invalid(
      'prompt',
      `must be at most ${MAX_PROMPT_CHARS} characters (got ${body.prompt.length})`,
    )
  if (body.n != null && (body.n < 1 || body.n > MAX_IMAGES))
    return invalid('n', `must be between 1 and ${MAX_IMAGES}`)
  if (
    body.response_format != null &&
    body.response_format !== 'url' &&
    body.response_format !== 'b64_json'
  ) {
    return invalid('response_format', "must be 'url' or 'b64_json'")
  }
  if (body.stream === true || (body.partial_images ?? 0) > 0) {
    const param = body.stream === true ? 'stream' : 'partial_images'
    return invalid(
      param,
      'streaming image generation is not supported; omit it and read the images from the response',
    )
  }
  return undefined
}

export const imageEnvelope = envelope<ImageRequest>(
  ImageRequest,
  new Set(Object.keys(ImageRequest.properties)),
  rules,
)

export type ImagePrice = {
  size: string
  quality: string
  images: number
  unitNano: number
  holdNano: number
}

/** The price of the request: the catalog's price per image for its size and quality, times n. */
export function priceImages(model: ImageModel, body: ImageRequest): ImagePrice | ServiceError {
  const size = body.size ?? model.defaultSize
  const quality = body.quality ?? model.defaultQuality
  const images = body.n ?? 1
  const unitNano = model.pricesNano.get(`${size}/${quality}`)
  if (unitNano !== undefined)
    return { size, quality, images, unitNano, holdNano: unitNano * images }
  const variants = [...model.pricesNano.keys()].map(
    (variant) => variant.split('/') as [string, string],
  )
  const sizes = [...new Set(variants.map(([known]) => known))]
  if (!sizes.includes(size))
    return invalid(
      'size',
      `${size} is not offered for ${model.id}; valid sizes: ${sizes.join(', ')}`,
    )
  const qualities = variants.filter(([known]) => known === size).map(([, known]) => known)
  return invalid(
    'quality',
    `${quality} is not offered for ${model.id} at size ${size}; valid qualities: ${qualities.join(', ')}`,
  )
}
