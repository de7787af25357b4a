#!/usr/bin/env bash
# Runs the part of the test suite where Node.js versions differ under each
# supported Node.js line other than the one CI installs with (README "Node.js
# versions"). `.ci/run` calls it after `npm test`; it needs what that needs
# (DATABASE_URL, REDIS_URL, an installed node_modules) and uses that
# node_modules as it is.
#
# Each Node.js comes from the npm registry: `node-<platform>-<arch>` packages
# the official builds, and `npm pack` checks the tarball against the registry's
# integrity. The binary is kept under ~/.cache/nft-data-service/node/<version>,
# so a rerun downloads nothing until a new release of the line appears.
#
#   scripts/test-node-versions.sh          # Node.js 22 and 24
#   scripts/test-node-versions.sh 24       # one line
set -euo pipefail
cd "$(dirname "$0")/.."

lines=("$@")
[ ${#lines[@]} -gt 0 ] || lines=(22 24)

# Whole test files: the engines check, the /v1 request path, the migrator, the client package.
files=(
  scripts/check-engines.test.ts
  src/server/rest/rest.test.ts
  src/db/migrate.test.ts
  src/client/package.test.ts
)
# One part of a file (file, then a test-name pattern): `npm start` with signals, one sync against anvil.
parts=(
  src/start/start.test.ts '`npm start` under signals'
  src/indexer/test/sync.test.ts 'indexes every ERC-721 shape'
)

cache="${XDG_CACHE_HOME:-$HOME/.cache}/nft-data-service/node"
package="node-$(node -p 'process.platform + "-" + process.arch')"
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT

# The path of the newest Node.js of a line (e.g. 22), fetched into the cache if missing.
node_of_line() {
  local version bin
  version=$(npm view "$package@$1" version --json | node -e '
    const found = JSON.parse(require("fs").readFileSync(0, "utf8"))
    console.log(require("semver").rsort([found].flat())[0])')
  bin="$cache/$version/bin/node"
  if [ ! -x "$bin" ]; then
    echo "fetching $package@$version" >&2
    npm pack --silent --pack-destination "$download" "$package@$version" >/dev/null
    mkdir -p "$cache"
    local unpacked
    unpacked=$(mktemp -d "$cache/.unpack-XXXXXX")
    tar -xzf "$download/$package-$version.tgz" -C "$unpacked" --strip-components=1 package/bin/node
    # Renamed into place whole, so a concurrent or interrupted run never sees half a binary.
    mv -T "$unpacked" "$cache/$version" 2>/dev/null || rm -rf "$unpacked"
    rm -f "$download/$package-$version.tgz"
  fi
  echo "$bin"
}

vitest=(node_modules/vitest/vitest.mjs run -c src/test/vitest.config.ts)
for line in "${lines[@]}"; do
  bin=$(node_of_line "$line")
  started=$SECONDS
  echo "== Node.js $("$bin" --version)"
  (
    # Children started by name (`node`, `npm start`, npm's own scripts) get this Node.js too.
    export PATH="$(dirname "$bin"):$PATH"
    node --import tsx scripts/check-engines.ts
    node "${vitest[@]}" "${files[@]}"
    for ((i = 0; i < ${#parts[@]}; i += 2)); do
      # A pattern that matches nothing (a renamed test) would pass silently: count what ran.
      node "${vitest[@]}" "${parts[i]}" -t "${parts[i + 1]}" \
        --reporter=default --reporter=json --outputFile.json="$download/report.json"
      node -e '
        const [report, file, pattern] = process.argv.slice(1)
        if (JSON.parse(require("fs").readFileSync(report, "utf8")).numPassedTests === 0) {
          console.error(`no test of ${file} matches "${pattern}"`)
          process.exit(1)
        }' "$download/report.json" "${parts[i]}" "${parts[i + 1]}"
    done
  )
  echo "== Node.js $("$bin" --version): $((SECONDS - started)) s"
done
