export interface TextPart {
  code: boolean
  text: string
}

/** Splits text at Markdown code spans (`like this`): the API document's descriptions use them. */
export function splitInlineCode(text: string): TextPart[] {
  const parts: TextPart[] = []
  let last = 0
  for (const m of text.matchAll(/`([^`]+)`/g)) {
    const at = m.index ?? 0
    if (at > last) parts.push({ code: false, text: text.slice(last, at) })
    parts.push({ code: true, text: m[1]! })
    last = at + m[0].length
  }
  if (last < text.length) parts.push({ code: false, text: text.slice(last) })
  return parts
}

/** Text whose `code spans` render as <code>; nothing else of Markdown is interpreted. */
export function InlineCode({ text }: { text: string }) {
  return (
    <>
      {splitInlineCode(text).map((part, i) =>
        part.code ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed string
          <code key={i}>{part.text}</code>
        ) : (
          part.text
        ),
      )}
    </>
  )
}
