import { LICENCE_SECTION_ID } from '@/lib/licence'

/** The terms the OpenAPI document's `info.license` points to (docs/api.md, "`info`"). */
export function LicenceSection({ network }: { network: string }) {
  return (
    <section id={LICENCE_SECTION_ID} aria-labelledby="h-licence">
      <h2 id="h-licence">Licence</h2>
      <p>
        This API is proprietary: no open-source licence covers it. Use it with an API key from the portal or a
        demo token, within the rate limits above; the operator of this deployment sets any further terms. The
        data comes from the public <code>{network}</code> chain and from the metadata each collection
        publishes, whose own terms apply to the artwork.
      </p>
    </section>
  )
}
