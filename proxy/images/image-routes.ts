/**
 * Image endpoints of the API server, mounted under /v1 and /api/v1: generation (the OpenAI Images API)
 * and the billing status of an image request. Bodies are read by the handler (parse: 'none') so the size
 * limit and the error shape stay the gateway's.
 */
import { Elysia } from 'elysia'
import type { Gateway } from '../gateway/gateway.ts'
import { generateImages } from './generate.ts'
import { imageStatus } from './status.ts'

export function imageRoutes(gw: Gateway) {
  return new Elysia()
    .post('/images/generations', ({ request }) => generateImages(gw, request), { parse: 'none' })
    .get('/images/status', ({ request }) => imageStatus(gw, request))
}
