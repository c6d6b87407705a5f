-- xe-locks-ring-buffer-no-loss: lock_acquired and lock_released to a ring buffer of 1,000 events, NO_EVENT_LOSS
-- source: catalog/sqlserver.yaml:317

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_ring_buffer_no_loss] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 7 AND sqlserver.is_system = 0)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 7 AND sqlserver.is_system = 0))
ADD TARGET package0.ring_buffer(SET max_events_limit = (1000))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_ring_buffer_no_loss] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_ring_buffer_no_loss') ALTER EVENT SESSION [obsbench_xe_locks_ring_buffer_no_loss] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_ring_buffer_no_loss') DROP EVENT SESSION [obsbench_xe_locks_ring_buffer_no_loss] ON SERVER;

-- count events (xe)
-- wait 31s after the run: the session's buffers reach the ring_buffer within its MAX_DISPATCH_LATENCY
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_ring_buffer_no_loss';
SELECT ISNULL(SUM(wait_time_ms), 0) FROM sys.dm_os_wait_stats WHERE wait_type = N'XE_BUFFERMGR_FREEBUF_EVENT';
SELECT CAST(t.target_data AS nvarchar(max)) FROM sys.dm_xe_session_targets t JOIN sys.dm_xe_sessions s ON s.address = t.event_session_address WHERE s.name = N'obsbench_xe_locks_ring_buffer_no_loss' AND t.target_name = N'ring_buffer';
