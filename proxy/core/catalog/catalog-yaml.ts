/**
 * The catalog file read as YAML, keeping where each field is written. The `yaml` package parses it into a
 * document whose nodes keep their offsets in the text (Bun's own parser returns plain values and reports
 * syntax errors without a position), so syntax errors and every later problem can name line and column.
 * Duplicate keys are syntax errors here: silently keeping the last of two `pricing:` would hide a mistake.
 */
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
} from 'yaml'
import type { FieldPath, LocateField } from './catalog-problems.ts'

export type CatalogYaml =
  | { ok: true; data: unknown; locate: LocateField }
  | { ok: false; error: string }

/** Parses catalog text from `file`; a syntax error comes back as `file:line:column: message`. */
export function readCatalogYaml(text: string, file: string): CatalogYaml {
  const lines = new LineCounter()
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false })
  const place = (offset: number) => {
    const { line, col } = lines.linePos(offset)
    return `${file}:${line}:${col}`
  }
  // The first syntax error is the one to fix: the parser's reports after it mostly follow from it.
  const [first, ...more] = document.errors
  if (first) {
    const after = more.length > 0 ? ` (and ${more.length} more after it)` : ''
    return { ok: false, error: `${place(first.pos[0])}: ${first.message}${after}` }
  }
  const locate = (path: FieldPath) => {
    return place(fieldOffset(document, path) ?? 0)
  }
  return { ok: true, data: document.toJS(), locate }
}

/**
 * Where the field at `path` starts: a mapping's field at its key, a list item at the item. A field that
 * is not there (a missing price) is placed at the nearest enclosing one that is (its model's `pricing`).
 */
function fieldOffset(document: Document, path: FieldPath): number | undefined {
  let node: unknown = document.contents
  let offset = document.contents?.range?.[0]
  for (const step of path) {
    if (isAlias(node)) node = node.resolve(document)
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(step),
      )
      if (!pair) break
      offset = (pair.key as Node).range?.[0] ?? offset
      node = pair.value
    } else if (isSeq(node) && typeof step === 'number' && step < node.items.length) {
      node = node.items[step]
      offset = (node as Node | null)?.range?.[0] ?? offset
    } else break
  }
  return offset
}
