-- A workspace's other programs (otherProgramsOfWorkspace: a customer key known in another program of the same
-- brand, read by the provider's events and by a sale's refusal) were found by walking the programs' primary key
-- with a filter on advertiser_id (`npm run plans`, 2,000 programs): an index lookup now.
CREATE INDEX "programs_advertiser_idx" ON "programs" USING btree ("advertiser_id");
