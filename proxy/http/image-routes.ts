/**
 * Image endpoints of the API server, mounted under /v1 and /api/v1: generation (the OpenAI Images API)
 * and the billing status of an image request. Bodies are read by the handler (parse: 'none') so the size
 * limit and the error shape stay the gateway's.
 */
import { Elysia } from 'elysia'
import { clientAddress, type AddressTrust } from './client-address.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import { generateImages } from '../pipeline/images/generate.ts'
import { imageStatus } from '../pipeline/images/status.ts'

export function imageRoutes(gw: Gateway, trust: AddressTrust) {
  return new Elysia()
    .post(
      '/images/generations',
      ({ request, server }) =>
        generateImages(gw, request, () => clientAddress(server, request, trust)),
      { parse: 'none' },
    )
    .get('/images/status', ({ request, server }) =>
      imageStatus(gw, request, () => clientAddress(server, request, trust)),
    )
}
