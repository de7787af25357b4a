import { CopyButton } from '@/components/ui/copy-button'
import { BreakableUrl } from './path-text'

/** The same request as a curl command, wrapping at URL separators, with a copy button. */
export function CurlCommand({ command, headingId }: { command: string; headingId: string }) {
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId} className="h3">
        The same request with curl
      </h2>
      <div className="curl-row">
        <pre data-testid="curl">
          <code>
            <BreakableUrl text={command} />
          </code>
        </pre>
        <CopyButton value={command} label="Copy" />
      </div>
    </section>
  )
}
