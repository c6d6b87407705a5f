-- A small report over one branch's first accounts; :lim comes from
-- --define lim=N.
\set bid random(1, :scale)
SELECT count(*) AS n, sum(abalance) AS total FROM pgbench_accounts
 WHERE bid = :bid AND aid <= :lim \gset
\if :n > 0
SELECT abalance FROM pgbench_accounts WHERE aid = :lim;
\else
\sleep 1 ms
\endif
