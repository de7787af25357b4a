import type { Metadata } from 'next'
import { ActivityFeed } from '@/components/explorer/activity-feed'

export const metadata: Metadata = { title: 'Live activity' }

export default function ActivityPage() {
  return <ActivityFeed heading="Live activity" headingLevel={1} />
}
