-- xe-plans-file-no-loss: actual plans to an event file with NO_EVENT_LOSS: a statement waits for a free buffer rather than drop its event
-- source: catalog/sqlserver.yaml:79

-- apply
CREATE EVENT SESSION [obsbench_xe_plans_file_no_loss] ON SERVER
ADD EVENT sqlserver.query_post_execution_showplan(ACTION(sqlserver.sql_text, sqlserver.session_id)
    WHERE (sqlserver.database_name = N'obsbench'))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/obsbench_xe_plans_file_no_loss_20261122T000000.xel', max_file_size = (100), max_rollover_files = (10))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_plans_file_no_loss] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_file_no_loss') ALTER EVENT SESSION [obsbench_xe_plans_file_no_loss] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_plans_file_no_loss') DROP EVENT SESSION [obsbench_xe_plans_file_no_loss] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_file_no_loss';
SELECT ISNULL(SUM(wait_time_ms), 0) FROM sys.dm_os_wait_stats WHERE wait_type = N'XE_BUFFERMGR_FREEBUF_EVENT';
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_file_no_loss') ALTER EVENT SESSION [obsbench_xe_plans_file_no_loss] ON SERVER STATE = STOP;
SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_plans_file_no_loss_20261122T000000*.xel', NULL, NULL, NULL);
SELECT COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_plans_file_no_loss_20261122T000000*.xel', NULL, NULL, NULL) WHERE object_name IN (N'query_post_execution_showplan') AND event_data LIKE N'%obsbench-tag%';
