'use client'

import { usePathname } from 'next/navigation'
import type { ReactNode } from 'react'
import { Link } from '@/components/ui/link'

/** A link that marks itself as the current page (aria-current) when it is. */
export function NavLink({
  href,
  children,
  exact = false,
  className,
}: {
  href: string
  children: ReactNode
  exact?: boolean
  className?: string
}) {
  const pathname = usePathname() ?? '/'
  const current = exact ? pathname === href : pathname === href || pathname.startsWith(`${href}/`)
  return (
    <Link href={href} className={className} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  )
}
