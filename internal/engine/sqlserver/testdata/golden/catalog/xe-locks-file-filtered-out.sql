-- xe-locks-file-filtered-out: lock_acquired and lock_released to an event file (100 MB files, 10 kept), with a predicate that never matches: records nothing
-- source: catalog/sqlserver.yaml:491

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_file_filtered_out] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 12)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 12))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/obsbench_xe_locks_file_filtered_out_20261122T000000.xel', max_file_size = (100), max_rollover_files = (10))
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_file_filtered_out] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_file_filtered_out') ALTER EVENT SESSION [obsbench_xe_locks_file_filtered_out] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_file_filtered_out') DROP EVENT SESSION [obsbench_xe_locks_file_filtered_out] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_file_filtered_out';
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_file_filtered_out') ALTER EVENT SESSION [obsbench_xe_locks_file_filtered_out] ON SERVER STATE = STOP;
SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_locks_file_filtered_out_20261122T000000*.xel', NULL, NULL, NULL);
SELECT COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_locks_file_filtered_out_20261122T000000*.xel', NULL, NULL, NULL) WHERE object_name IN (N'lock_acquired', N'lock_released');
