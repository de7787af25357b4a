#!/bin/sh
# Stand-in for Prisma's schema engine, which cannot be downloaded offline.
# `prisma generate` only needs the path to exist; anything that tries to
# migrate through it fails here, loudly. Migrations are applied by
# src/db/migrate.ts instead.
echo "schema engine is not available: apply migrations with 'npm run db:migrate'" >&2
exit 1
