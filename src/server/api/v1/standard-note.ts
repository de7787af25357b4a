/** What the collection- and token-scoped endpoints say of ERC-1155 (docs/api.md, "ERC-1155"). */
export const ERC1155_SCOPED =
  ' Of an ERC-1155 collection only with `standard=ERC1155` or `standard=all` (extension): without it, 404 NOT_FOUND naming the parameter.'
