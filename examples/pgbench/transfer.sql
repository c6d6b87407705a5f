-- Move money between two accounts of pgbench -i's tables: the sum of all
-- balances stays what it was.
\set from random(1, 100000 * :scale)
\set to random(1, 100000 * :scale)
\set delta random(1, 100)
\if :from = :to
\set to :from % (100000 * :scale) + 1
\endif
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance - :delta WHERE aid = :from;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :to;
SELECT abalance AS after FROM pgbench_accounts WHERE aid = :to \gset
COMMIT;
