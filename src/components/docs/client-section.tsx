/** The typed client package: how to install it, and how to use it. */
export function ClientSection({ base }: { base: string }) {
  return (
    <section id="client" aria-labelledby="h-client">
      <h2 id="h-client">TypeScript client</h2>
      <p>
        The repository ships a typed client, the package <code>@nft-data-service/client</code> (in{' '}
        <code>src/client</code>; its one dependency is <code>openapi-fetch</code>): types generated from{' '}
        <a href="/openapi.json">/openapi.json</a>, async iterators over every list, retries of 429 and 503
        (for reads also a gateway&apos;s 502 and 504, a dropped connection and an attempt past its time limit)
        with exponential backoff, jitter and <code>Retry-After</code>, and an activity follower. Use it from
        your server, never in a browser. It is not on a registry: from a clone of the repository (after{' '}
        <code>npm install</code> there), pack it and install the tarball into your project:
      </p>
      <pre>
        <code>{`npm pack ./src/client      # builds dist/ and writes nft-data-service-client-0.1.0.tgz
cd ../your-project
npm install ../nft-data-service/nft-data-service-client-0.1.0.tgz`}</code>
      </pre>
      <pre>
        <code>{`import { createNftDataClient, NftDataApiError } from '@nft-data-service/client'

const nft = createNftDataClient({
  baseUrl: '${base}',
  apiKey: process.env.NFT_API_KEY,
  retry: { attempts: 5, baseDelayMs: 500, timeoutMs: 30_000 },   // the defaults
})

// One resource: typed path parameters and body
const { data: token } = await nft.get('/v1/nfts/{address}/{tokenId}', {
  path: { address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', tokenId: '17' },
})

// Every item of a list: next_page_params are followed for you
for await (const c of nft.items('/v1/collections', { query: { search: 'punk', limit: 100 } })) {
  console.log(c.name, c.total_supply)
}

// Errors: one class with the envelope (status 0 and NETWORK_ERROR or TIMEOUT when no answer came);
// both spellings of 400 and 503 codes accepted
try {
  await nft.get('/v1/collections/{address}', { path: { address } })
} catch (err) {
  if (err instanceof NftDataApiError && err.canonicalCode === 'NOT_FOUND') console.log(err.requestId)
  else throw err
}`}</code>
      </pre>
      <p>
        <strong>Following new activity.</strong> <code>followActivity</code> polls the first page of{' '}
        <code>/v1/activity</code> every 12 seconds, deduplicates on <code>transaction_hash</code> +{' '}
        <code>log_index</code> (+ <code>batch_index</code>), reads further pages after a burst (a long one
        over several polls), and yields each new event once, oldest first:
      </p>
      <pre>
        <code>{`const stop = new AbortController()
for await (const e of nft.followActivity({ query: { event_type: 'mint' }, skipExisting: true, signal: stop.signal })) {
  console.log(e.block_number, e.collection_name, e.token_id, e.confirmations)
}`}</code>
      </pre>
    </section>
  )
}
