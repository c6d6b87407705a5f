-- xe-locks-no-target-filtered-out: lock_acquired and lock_released to no target: the events fire, their actions run, and nothing keeps them, with a predicate that never matches: records nothing
-- source: catalog/sqlserver.yaml:282

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_no_target_filtered_out] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 12)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 12))
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_no_target_filtered_out] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_no_target_filtered_out') ALTER EVENT SESSION [obsbench_xe_locks_no_target_filtered_out] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_no_target_filtered_out') DROP EVENT SESSION [obsbench_xe_locks_no_target_filtered_out] ON SERVER;
