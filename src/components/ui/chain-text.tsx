import type { ReactNode } from 'react'
import { displayText } from './display-text'

/**
 * Text anyone can write, shown — by the explorer and the portal's token view alike
 * (docs/explorer.md, "Hostile input"): in a <bdi>, so a bidi override or embedding inside it
 * (U+202E…) reorders nothing outside it — a token id, a separator, the sentence around it;
 * breakable anywhere (`.chain-text`, src/app/styles/controls.css), so one long word never widens
 * the page; combining marks limited; cut to `max` characters when given, the whole text then in
 * `title`. Text with nothing visible in it shows `fallback` instead (a token's `#id`, an address).
 */
export function ChainText({
  text,
  fallback,
  max,
  className,
}: {
  text: string | null | undefined
  fallback: ReactNode
  max?: number
  className?: string
}) {
  const shown = displayText(text, max)
  const whole = max !== undefined && shown !== null ? displayText(text) : null
  return (
    <bdi
      className={className ? `chain-text ${className}` : 'chain-text'}
      title={whole !== null && whole !== shown ? whole : undefined}
    >
      {shown ?? fallback}
    </bdi>
  )
}
