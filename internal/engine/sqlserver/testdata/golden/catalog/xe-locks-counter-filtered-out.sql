-- xe-locks-counter-filtered-out: lock_acquired and lock_released to an event counter (counts per event, synchronously), with a predicate that never matches: records nothing
-- source: catalog/sqlserver.yaml:595

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_counter_filtered_out] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 12)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 12))
ADD TARGET package0.event_counter
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_counter_filtered_out] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_counter_filtered_out') ALTER EVENT SESSION [obsbench_xe_locks_counter_filtered_out] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_counter_filtered_out') DROP EVENT SESSION [obsbench_xe_locks_counter_filtered_out] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_counter_filtered_out';
SELECT CAST(t.target_data AS nvarchar(max)) FROM sys.dm_xe_session_targets t JOIN sys.dm_xe_sessions s ON s.address = t.event_session_address WHERE s.name = N'obsbench_xe_locks_counter_filtered_out' AND t.target_name = N'event_counter';
