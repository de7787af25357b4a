import type { ReactNode } from 'react'

const TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g

/** Pretty-printed JSON with keys, strings, numbers and literals told apart by colour. */
export function JsonView({ value }: { value: unknown }) {
  const text = JSON.stringify(value, null, 2) ?? ''
  const parts: ReactNode[] = []
  let last = 0
  let i = 0
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index ?? 0
    if (at > last) parts.push(text.slice(last, at))
    const [whole, str, colon, literal, num] = m
    if (str !== undefined) {
      parts.push(
        <span key={i++} className={colon ? 'k' : 's'}>
          {str}
        </span>,
      )
      if (colon) parts.push(colon)
    } else if (literal !== undefined) {
      parts.push(
        <span key={i++} className="b">
          {literal}
        </span>,
      )
    } else if (num !== undefined) {
      parts.push(
        <span key={i++} className="n">
          {num}
        </span>,
      )
    }
    last = at + whole.length
  }
  if (last < text.length) parts.push(text.slice(last))
  return (
    // A scrolling region: focusable, so that a keyboard can scroll it too.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: scrollable content must take focus (WCAG 2.1.1)
    <pre className="json" data-testid="response-json" tabIndex={0}>
      <code>{parts}</code>
    </pre>
  )
}
