/**
 * Where the browser wrapped an element's text: for each line break, the
 * characters just before and after it (measured from the rendered glyphs).
 */
import type { Locator } from '@playwright/test'

export interface LineBreak {
  before: string
  after: string
}

export function lineBreaks(element: Locator): Promise<LineBreak[]> {
  return element.evaluate((root) => {
    const chars: { ch: string; top: number }[] = []
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
    const range = document.createRange()
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? ''
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i)
        range.setEnd(node, i + 1)
        const rect = range.getClientRects()[0]
        if (rect && rect.width > 0) chars.push({ ch: text[i]!, top: Math.round(rect.top) })
      }
    }
    const breaks: { before: string; after: string }[] = []
    for (let i = 1; i < chars.length; i++) {
      if (chars[i]!.top > chars[i - 1]!.top + 2) {
        breaks.push({
          before: chars
            .slice(Math.max(0, i - 24), i)
            .map((c) => c.ch)
            .join(''),
          after: chars
            .slice(i, i + 24)
            .map((c) => c.ch)
            .join(''),
        })
      }
    }
    return breaks
  })
}

/** A break before "/", after "?", "&", a space or a line end: never inside a word. */
export function atSeparator(b: LineBreak): boolean {
  return b.after.startsWith('/') || /[?&\s'\\]$/.test(b.before) || /^\s/.test(b.after)
}
