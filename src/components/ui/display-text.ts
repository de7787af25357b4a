/**
 * Text anyone can write — a collection's name and symbol, a token's name and description, trait
 * types and values, and what a link's address carries — as the explorer and the portal's token
 * view show it (docs/explorer.md, "Hostile input"). Pure, so it is unit-tested; `ChainText`
 * (chain-text.tsx) puts the result in a <bdi>; a plain-text attribute (an image's alt) uses
 * `displayText` with a fallback of its own.
 */

/**
 * Combining marks kept on one character. Scripts that stack marks (Hebrew points and cantillation,
 * Vietnamese, Thai, Tibetan) use a few; "Zalgo" text stacks hundreds, drawn across the lines and
 * boxes around it, and one character with its marks cannot be wrapped.
 */
export const MAX_MARKS = 4

/**
 * Characters that show nothing: controls, format characters (zero-width space and joiners, bidi
 * controls, the byte-order mark, tags), separators, lone combining marks, and the blank letters
 * (Hangul fillers, the braille blank). A name of these alone is no name anyone can see.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}\p{M}\u115f\u1160\u3164\uffa0\u2800]/gu

const MARK_RUN = new RegExp(`(\\p{M}{${MAX_MARKS}})\\p{M}+`, 'gu')

/** Whether `text` has a character that can be seen. */
export function isVisible(text: string): boolean {
  return text.replace(INVISIBLE, '') !== ''
}

/** `text` with at most MAX_MARKS combining marks on each character. */
export function limitMarks(text: string): string {
  return text.replace(MARK_RUN, '$1')
}

const graphemes =
  typeof Intl !== 'undefined' && 'Segmenter' in Intl
    ? new Intl.Segmenter('en', { granularity: 'grapheme' })
    : undefined

/**
 * `text` cut to `max` characters as a reader counts them (grapheme clusters: an emoji, a letter
 * with its marks), with "…" when something was cut; never inside a character.
 */
export function cutText(text: string, max: number): string {
  if ([...text].length <= max) return text
  if (!graphemes) return `${[...text].slice(0, max).join('')}…`
  let out = ''
  let n = 0
  for (const { segment } of graphemes.segment(text)) {
    if (n++ === max) return `${out}…`
    out += segment
  }
  return out
}

/**
 * Chain text as shown: marks limited, cut to `max` characters when given; null when nothing in it
 * can be seen (absent, empty, or only invisible characters), so the caller shows its fallback.
 */
export function displayText(value: string | null | undefined, max?: number): string | null {
  if (typeof value !== 'string' || !isVisible(value)) return null
  const limited = limitMarks(value)
  return max === undefined ? limited : cutText(limited, max)
}
