// The site server's dashboard files: built assets with long caching, index.html for every client-side
// route (a hard refresh of any page works), nothing outside the build or hidden in it; an API's unknown
// path is a JSON 404.
import { beforeAll, expect, test } from 'bun:test'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dashboardFile } from '../../../proxy/http/site-server.ts'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashboard-'))
  await mkdir(join(dir, 'assets'))
  await mkdir(join(dir, '.vite'))
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>dashboard</title>')
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)')
  await writeFile(join(dir, 'push-sw.js'), 'self.addEventListener("push", () => {})')
  await writeFile(join(dir, '.vite', 'manifest.json'), '{}')
})

test('hashed assets are cached for a year, other files revalidated', async () => {
  const asset = await dashboardFile(dir, 'assets/index-abc123.js')
  expect(await asset.text()).toBe('console.log(1)')
  expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  const worker = await dashboardFile(dir, 'push-sw.js')
  expect(worker.headers.get('cache-control')).toBe('no-cache')
})

test('client-side routes, unknown paths, hidden files and escapes all get index.html', async () => {
  for (const path of [
    '',
    'dashboard',
    'dashboard/keys',
    'sign-in',
    'assets/missing.js',
    '.vite/manifest.json',
    '../package.json',
    'assets/../../etc/passwd',
  ]) {
    const response = await dashboardFile(dir, path)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(await response.text()).toContain('<title>dashboard</title>')
    // The page that shows secrets runs only its own scripts and is never framed.
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
  }
})

test('an unknown path of an API is a JSON 404 naming it, not the dashboard page', async () => {
  for (const path of [
    'operator/v1/account/acct_x',
    'operator/v1',
    'admin/v1/nothing',
    'api/v1/model',
    'v1/models',
    'webhooks/paypal',
  ]) {
    const response = await dashboardFile(dir, path)
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(await response.json()).toEqual({
      error: { code: 'not_found', message: `No endpoint at GET /${path}.`, param: null },
    })
  }
  expect((await dashboardFile(dir, 'operators')).status).toBe(200)
})

test('without a build, a clear 503', async () => {
  const response = await dashboardFile(join(dir, 'nowhere'), 'dashboard')
  expect(response.status).toBe(503)
  expect(await response.text()).toContain('bun run build')
})
