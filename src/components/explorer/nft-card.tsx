import type { Nft } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { Link } from '@/components/ui/link'
import { Artwork } from './artwork'
import { count, exploreHref, short, shortId } from './links'

/** Characters of a name a card shows (in at most three lines); the token's page shows it whole. */
export const CARD_NAME = 100

/** A token in a gallery: its artwork, name and id, and a link to its page. */
export function NftCard({ nft, showCollection = false }: { nft: Nft; showCollection?: boolean }) {
  return (
    <li className="nft-card" data-testid="nft-card">
      <Artwork nft={nft} alt="" size={256} />
      <div className="nft-card-body">
        <Link href={exploreHref.nft(nft.collection_address, nft.token_id)} className="stretched-link">
          <ChainText
            text={nft.name}
            fallback={`#${shortId(nft.token_id)}`}
            max={CARD_NAME}
            className="clamp"
          />
        </Link>
        <span className="muted small">
          {showCollection ? (
            <>
              <ChainText text={nft.collection_name} fallback={short(nft.collection_address)} max={40} />{' '}
            </>
          ) : null}
          #{shortId(nft.token_id)}
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
