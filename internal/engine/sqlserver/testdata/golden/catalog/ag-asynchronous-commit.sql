-- ag-asynchronous-commit: availability group asynchronous commit: a commit does not wait for the secondary replicas
-- source: catalog/sqlserver.yaml:940

-- apply
ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL2' WITH (AVAILABILITY_MODE = ASYNCHRONOUS_COMMIT);

-- revert
ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL2' WITH (AVAILABILITY_MODE = SYNCHRONOUS_COMMIT);
