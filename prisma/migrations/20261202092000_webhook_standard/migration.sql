-- Which token standards a webhook endpoint receives (docs/push.md, "ERC-1155"), as the live
-- stream's `standard` parameter: NULL, ERC-721 events in the specification's shape, as every
-- endpoint received before; 'ERC721', 'ERC1155' or 'all', the events of those standards, each
-- with its `amount`.
ALTER TABLE "webhook_endpoints" ADD COLUMN "standard" VARCHAR(8);
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_standard_check"
  CHECK ("standard" IN ('ERC721', 'ERC1155', 'all'));
