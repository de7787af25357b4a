/**
 * A Turbopack loader for the typed client's sources (src/client, next.config.mjs): they import
 * each other as `./client.js` (the package is compiled as NodeNext, where the extension is
 * required), and Turbopack, unlike TypeScript and webpack's `extensionAlias`, does not map such
 * an import to the `.ts` file (vercel/next.js#82945). The extension is dropped from relative
 * imports and re-exports; nothing else changes, so the portal bundles the same sources the
 * package is built from.
 */
module.exports = function stripJsExtensions(source) {
  return source.replace(/(\bfrom\s+['"]\.{1,2}\/[^'"\n]+)\.js(['"])/g, '$1$2')
}
