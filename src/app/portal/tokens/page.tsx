import type { Metadata } from 'next'
import { TokenView } from '@/components/portal/tokens/token-view'

export const metadata: Metadata = { title: 'Tokens' }

export default function TokensPage() {
  return <TokenView />
}
