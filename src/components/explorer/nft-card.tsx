import Link from 'next/link'
import type { Nft } from '@/client'
import { Artwork } from './artwork'
import { count, exploreHref, short, shortId } from './links'

/** A token in a gallery: its artwork, name and id, and a link to its page. */
export function NftCard({ nft, showCollection = false }: { nft: Nft; showCollection?: boolean }) {
  const title = nft.name ?? `#${shortId(nft.token_id)}`
  return (
    <li className="nft-card" data-testid="nft-card">
      <Artwork nft={nft} alt="" size={256} />
      <div className="nft-card-body">
        <Link href={exploreHref.nft(nft.collection_address, nft.token_id)} className="stretched-link">
          {title}
        </Link>
        <span className="muted small">
          {showCollection ? `${nft.collection_name || short(nft.collection_address)} ` : ''}#
          {shortId(nft.token_id)}
          {nft.contract_type === 'ERC1155' ? ' · ERC-1155' : ''}
          {nft.balance !== undefined && nft.contract_type === 'ERC1155' ? ` · ×${count(nft.balance)}` : ''}
          {nft.contract_type === 'ERC1155' && nft.total_supply !== undefined && nft.balance === undefined
            ? ` · supply ${count(nft.total_supply)}`
            : ''}
        </span>
        {nft.is_burned ? <span className="badge warn">burned</span> : null}
      </div>
    </li>
  )
}
