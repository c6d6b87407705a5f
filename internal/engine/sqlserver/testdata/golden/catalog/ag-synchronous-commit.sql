-- ag-synchronous-commit: availability group synchronous commit: a commit waits until the secondary replicas have hardened the log (HADR_SYNC_COMMIT)
-- source: catalog/sqlserver.yaml:934

-- apply
ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL3' WITH (AVAILABILITY_MODE = SYNCHRONOUS_COMMIT);

-- revert
ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL3' WITH (AVAILABILITY_MODE = ASYNCHRONOUS_COMMIT);
