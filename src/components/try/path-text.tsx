import { Fragment } from 'react'

/** Pieces of a path or URL, cut before each "/" and after each "?" and "&". */
function pathPieces(path: string): string[] {
  return path.split(/(?=\/)|(?<=[?&])/)
}

/**
 * An API path or URL that may wrap on a narrow screen only before a "/" or
 * after "?" and "&", never inside a word: <wbr> marks those places, and
 * copying the text copies no extra character.
 */
export function BreakableUrl({ text }: { text: string }) {
  return (
    <>
      {pathPieces(text).map((piece, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one fixed string
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {piece}
        </Fragment>
      ))}
    </>
  )
}

export function PathText({ path }: { path: string }) {
  return (
    <span className="path">
      <BreakableUrl text={path} />
    </span>
  )
}
