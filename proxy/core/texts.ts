/**
 * Visiting the texts of a request: every piece of text a model reads that the client sent, so that
 * guardrails can inspect and redact it and the context check can count it. A visitor returns a
 * replacement, or undefined to keep the text.
 */

export type TextVisitor = (text: string) => string | undefined

/** The texts a walk visits, in order, left as they are. */
export function collectTexts(walk: (visit: TextVisitor) => void): string[] {
  const texts: string[] = []
  walk((text) => {
    texts.push(text)
    return undefined
  })
  return texts
}

/** Visits `holder[field]` when it is a string, writing back a replacement. */
export function visitField(holder: unknown, field: string, visit: TextVisitor): void {
  if (typeof holder !== 'object' || holder === null) return
  const record = holder as Record<string, unknown>
  const value = record[field]
  if (typeof value !== 'string') return
  const replaced = visit(value)
  if (replaced !== undefined) record[field] = replaced
}

/** Visits every string inside a JSON value (tool inputs), writing back replacements; keys are left alone. */
export function visitStrings(value: unknown, visit: TextVisitor): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (typeof value[i] === 'string') {
        const replaced = visit(value[i])
        if (replaced !== undefined) value[i] = replaced
      } else visitStrings(value[i], visit)
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const field of Object.keys(value)) {
      if (typeof (value as Record<string, unknown>)[field] === 'string')
        visitField(value, field, visit)
      else visitStrings((value as Record<string, unknown>)[field], visit)
    }
  }
}

/** A media type whose data is text (text/*, JSON, XML, YAML), which a file of it is read as. */
const TEXT_MEDIA_TYPE = /^(?:text\/[\w.+-]+|application\/(?:[\w.+-]+\+)?(?:json|xml|yaml|x-yaml))$/i
/** `data:<type>;base64,<data>` with its parameters: the type is checked against TEXT_MEDIA_TYPE. */
const DATA_URL_PREFIX = /^data:([^;,]+)((?:;[\w-]+=[\w.-]+)*);base64,/i

/** Visits base64 `holder[field]` as the text it holds, writing a replacement back encoded. */
export function visitBase64Text(
  holder: Record<string, unknown>,
  field: string,
  visit: TextVisitor,
) {
  visitEncoded(holder, field, '', visit)
}

/** Visits the decoded text of an inline file of a text type (a data URL), writing a replacement back encoded. */
export function visitTextDataUrl(holder: unknown, field: string, visit: TextVisitor): void {
  if (typeof holder !== 'object' || holder === null) return
  const value = (holder as Record<string, unknown>)[field]
  if (typeof value !== 'string') return
  const match = DATA_URL_PREFIX.exec(value)
  if (match && isTextMediaType(match[1]!))
    visitEncoded(holder as Record<string, unknown>, field, match[0], visit)
}

export const isTextMediaType = (mediaType: string) => TEXT_MEDIA_TYPE.test(mediaType)

function visitEncoded(
  holder: Record<string, unknown>,
  field: string,
  prefix: string,
  visit: TextVisitor,
): void {
  const value = holder[field]
  if (typeof value !== 'string') return
  const text = Buffer.from(value.slice(prefix.length), 'base64').toString('utf8')
  const replaced = visit(text)
  if (replaced !== undefined)
    holder[field] = prefix + Buffer.from(replaced, 'utf8').toString('base64')
}

/** Visits `holder[field]` when it is a string, or hands each part to `parts` when it is an array of parts. */
export function visitContent(
  holder: Record<string, unknown>,
  field: string,
  visit: TextVisitor,
  parts: (part: Record<string, unknown>, visit: TextVisitor) => void,
): void {
  const content = holder[field]
  if (typeof content === 'string') visitField(holder, field, visit)
  else if (Array.isArray(content))
    for (const part of content)
      if (typeof part === 'object' && part !== null) parts(part as Record<string, unknown>, visit)
}

/** Schema keywords whose value maps names to schemas: the names are not texts, each value is a schema. */
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
])
/** Schema keywords whose strings are values the model reads. */
const SCHEMA_VALUES = new Set(['enum', 'const', 'default', 'examples'])

/**
 * Visits the texts a model reads in a JSON Schema (tool parameters, an output format): every
 * `description` and `title`, and the strings of `enum`, `const`, `default` and `examples`, at any depth.
 * Property names, types, patterns and references are left alone, so a rewrite never changes the shape.
 */
export function visitSchemaTexts(schema: unknown, visit: TextVisitor): void {
  if (Array.isArray(schema)) {
    for (const item of schema) visitSchemaTexts(item, visit)
    return
  }
  if (typeof schema !== 'object' || schema === null) return
  const record = schema as Record<string, unknown>
  for (const field of Object.keys(record)) {
    const value = record[field]
    if (field === 'description' || field === 'title') visitField(record, field, visit)
    else if (SCHEMA_VALUES.has(field)) {
      if (typeof value === 'string') visitField(record, field, visit)
      else visitStrings(value, visit)
    } else if (SCHEMA_MAPS.has(field) && typeof value === 'object' && value !== null) {
      for (const sub of Object.values(value)) visitSchemaTexts(sub, visit)
    } else if (typeof value === 'object') visitSchemaTexts(value, visit)
  }
}
