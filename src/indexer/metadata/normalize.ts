/**
 * The fields of a token's metadata document the API serves beside the
 * specification's (docs/metadata.md, "The whole document"): description,
 * attributes, animation_url, external_url, background_color. A pure function
 * of the parsed document; every value is capped so that a hostile document
 * (huge or deeply nested attribute lists, megabyte strings, values of any
 * type, `__proto__` keys) gives a small, well-formed result.
 */
import { toValidUri } from './resolve-uri'

/** The caps (docs/metadata.md, "Caps"). */
export const METADATA_CAPS = {
  attributes: 100,
  traitTypeChars: 256,
  valueChars: 1_024,
  displayTypeChars: 64,
  descriptionChars: 10_000,
  animationUrlChars: 8_192,
  externalUrlChars: 2_048,
  /** Entries of an attribute list looked at (beyond: ignored), so a list of a million entries costs little. */
  entriesScanned: 1_000,
} as const

export interface TokenAttribute {
  trait_type: string
  value: string | number | boolean
  display_type?: string
}

export interface NormalizedMetadata {
  description: string | null
  /** null: the document declares no attributes in a shape read here. */
  attributes: TokenAttribute[] | null
  animationUrl: string | null
  externalUrl: string | null
  /** Six lowercase hex digits, no '#'. */
  backgroundColor: string | null
}

/** Unpaired UTF-16 surrogates (JSON allows `\ud800`, PostgreSQL's jsonb and UTF-8 do not) become U+FFFD. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd')
}

/** Control characters other than tab and newlines: dropped wherever they are. */
const isDropped = (code: number) =>
  (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f

/** What String.prototype.trim removes (WhiteSpace and LineTerminator); all of it in the BMP. */
const isSpace = (code: number) =>
  (code >= 0x09 && code <= 0x0d) ||
  code === 0x20 ||
  code === 0xa0 ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029 ||
  code === 0x202f ||
  code === 0x205f ||
  code === 0x3000 ||
  code === 0xfeff

/**
 * Text as served: control characters (but tab and newlines) and NUL dropped,
 * unpaired surrogates made U+FFFD, trimmed, at most `maxChars` code points
 * (never cutting a character in two). What is dropped, and leading
 * whitespace, take no room under the cap: the walk goes on past them, however
 * long, until `maxChars` code points are kept, so text that differs only
 * there is one value. The input is bounded by the document's own size cap; the walk stops
 * once the cap is reached, and kept runs are sliced, not copied by character.
 */
export function cleanValueText(text: string, maxChars: number): string {
  const n = text.length
  let i = 0
  // Leading dropped or trimmed characters (all in the BMP) take no room.
  while (i < n) {
    const code = text.charCodeAt(i)
    if (!isDropped(code) && !isSpace(code)) break
    i++
  }
  const parts: string[] = []
  let runStart = i
  let kept = 0
  while (i < n && kept < maxChars) {
    const code = text.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i += 2 // a pair: one code point, kept whole
      } else {
        // Unpaired in the text as given (checked before anything is dropped, so dropping never pairs two halves).
        if (i > runStart) parts.push(text.slice(runStart, i))
        parts.push('\ufffd')
        runStart = ++i
      }
      kept++
    } else if (isDropped(code)) {
      if (i > runStart) parts.push(text.slice(runStart, i))
      runStart = ++i
    } else {
      i++
      kept++
    }
  }
  if (i > runStart) parts.push(text.slice(runStart, i))
  // Trailing whitespace, of the value or where the cap cut it, is trimmed.
  return (parts.length === 1 ? parts[0]! : parts.join('')).trim()
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** An own property only (never one inherited through a `__proto__` key or Object.prototype). */
function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined
}

function firstOwn(obj: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) {
    const v = own(obj, key)
    if (v !== undefined && v !== null) return v
  }
  return undefined
}

function scalarValue(v: unknown): string | number | boolean | null {
  if (typeof v === 'string') return cleanValueText(v, METADATA_CAPS.valueChars) || null
  if (typeof v === 'number') return Number.isFinite(v) ? v : null
  if (typeof v === 'boolean') return v
  return null
}

function traitType(v: unknown): string | null {
  if (typeof v === 'string') return cleanValueText(v, METADATA_CAPS.traitTypeChars) || null
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  return null
}

function displayType(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined
  return cleanValueText(v, METADATA_CAPS.displayTypeChars) || undefined
}

const TYPE_KEYS = ['trait_type', 'traitType', 'type', 'key', 'name'] as const
const VALUE_KEYS = ['value', 'trait_value', 'traitValue'] as const
const DISPLAY_KEYS = ['display_type', 'displayType'] as const

/** One entry of an `attributes` / `traits` array: `{trait_type, value, display_type?}` and its common spellings. */
function fromEntry(entry: unknown): TokenAttribute | null {
  if (!isRecord(entry)) return null
  const type = traitType(firstOwn(entry, TYPE_KEYS))
  const value = scalarValue(firstOwn(entry, VALUE_KEYS))
  if (type === null || value === null) return null
  const display = displayType(firstOwn(entry, DISPLAY_KEYS))
  return display === undefined
    ? { trait_type: type, value }
    : { trait_type: type, value, display_type: display }
}

/** One key of a `properties` (or object-shaped `attributes`/`traits`) map: key → value, or key → {value, …}. */
function fromProperty(key: string, raw: unknown): TokenAttribute | null {
  const type = traitType(key)
  if (type === null) return null
  if (isRecord(raw)) {
    const value = scalarValue(firstOwn(raw, VALUE_KEYS))
    if (value === null) return null
    const display = displayType(firstOwn(raw, DISPLAY_KEYS))
    return display === undefined
      ? { trait_type: type, value }
      : { trait_type: type, value, display_type: display }
  }
  const value = scalarValue(raw)
  return value === null ? null : { trait_type: type, value }
}

function attributesOf(shape: unknown): TokenAttribute[] {
  const found: Array<TokenAttribute | null> = []
  if (Array.isArray(shape)) {
    const n = Math.min(shape.length, METADATA_CAPS.entriesScanned)
    for (let i = 0; i < n; i++) found.push(fromEntry(shape[i]))
  } else if (isRecord(shape)) {
    let i = 0
    for (const key of Object.keys(shape)) {
      if (i++ === METADATA_CAPS.entriesScanned) break
      found.push(fromProperty(key, shape[key]))
    }
  }
  // A pair (trait type, value) counts once; several values of one type are kept (OpenSea shows them all).
  const seen = new Set<string>()
  const out: TokenAttribute[] = []
  for (const a of found) {
    if (a === null) continue
    const key = JSON.stringify([a.trait_type, typeof a.value, a.value])
    if (seen.has(key)) continue
    seen.add(key)
    out.push(a)
    if (out.length === METADATA_CAPS.attributes) break
  }
  return out
}

/**
 * The attributes of a document: the first of `attributes`, `traits`,
 * `properties` that yields any (an array of `{trait_type, value}` entries or
 * an object of key → value / key → {value}). null when none does.
 */
export function normalizeAttributes(doc: Record<string, unknown>): TokenAttribute[] | null {
  for (const key of ['attributes', 'traits', 'properties']) {
    const list = attributesOf(own(doc, key))
    if (list.length > 0) return list
  }
  return null
}

function uriField(doc: Record<string, unknown>, keys: readonly string[], maxChars: number): string | null {
  const v = firstOwn(doc, keys)
  if (typeof v !== 'string') return null
  const trimmed = v.trim()
  // Longer locations are left out (still in the stored document): a media path URL cannot name them.
  if (trimmed === '' || trimmed.length > maxChars) return null
  const uri = toValidUri(wellFormed(trimmed))
  return uri.length <= maxChars ? uri : null
}

function colorOf(v: unknown): string | null {
  if (typeof v !== 'string') return null
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(v.trim())
  if (!m) return null
  const hex = m[1]!.toLowerCase()
  return hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex
}

export function normalizeMetadata(doc: Record<string, unknown>): NormalizedMetadata {
  const description = own(doc, 'description')
  return {
    description:
      typeof description === 'string'
        ? cleanValueText(description, METADATA_CAPS.descriptionChars) || null
        : null,
    attributes: normalizeAttributes(doc),
    animationUrl: uriField(doc, ['animation_url', 'animationUrl'], METADATA_CAPS.animationUrlChars),
    externalUrl: uriField(
      doc,
      ['external_url', 'externalUrl', 'external_link'],
      METADATA_CAPS.externalUrlChars,
    ),
    backgroundColor: colorOf(own(doc, 'background_color')),
  }
}
