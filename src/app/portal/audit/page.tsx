import type { Metadata } from 'next'
import { AuditTrail } from '@/components/portal/audit/audit-trail'

export const metadata: Metadata = { title: 'Audit trail' }

export default function AuditPage() {
  return <AuditTrail />
}
