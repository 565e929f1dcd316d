/**
 * The guardrail scan's thread: large texts are searched here, so a slow pattern holds this thread and
 * not the event loop that serves every other request. The parent ends the thread when a scan passes
 * its deadline. Filters are compiled once per guardrail version, as on the request's thread.
 */
import { compileFilters, type CompiledFilters } from './detectors.ts'
import { inspectTexts } from './inspect-texts.ts'

declare const self: Worker

export type ScanRequest = {
  id: number
  guardrailId: string
  version: number
  filters: unknown
  texts: string[]
}

const compiled = new Map<string, { version: number; filters: CompiledFilters }>()

self.onmessage = (event: MessageEvent<ScanRequest>) => {
  const { id, guardrailId, version, texts } = event.data
  try {
    let cached = compiled.get(guardrailId)
    if (!cached || cached.version !== version) {
      cached = { version, filters: compileFilters(event.data.filters) }
      compiled.set(guardrailId, cached)
    }
    self.postMessage({ id, inspection: inspectTexts(texts, cached.filters) })
  } catch (error) {
    self.postMessage({ id, failure: (error as Error).message })
  }
}
