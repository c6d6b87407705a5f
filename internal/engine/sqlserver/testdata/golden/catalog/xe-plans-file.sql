-- xe-plans-file: actual plans (query_post_execution_showplan) to an event file (100 MB files, 10 kept), events may be dropped when buffers are full
-- source: catalog/sqlserver.yaml:63

-- apply
CREATE EVENT SESSION [obsbench_xe_plans_file] ON SERVER
ADD EVENT sqlserver.query_post_execution_showplan(ACTION(sqlserver.sql_text, sqlserver.session_id)
    WHERE (sqlserver.database_name = N'obsbench'))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/obsbench_xe_plans_file_20261122T000000.xel', max_file_size = (100), max_rollover_files = (10))
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_plans_file] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_file') ALTER EVENT SESSION [obsbench_xe_plans_file] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_plans_file') DROP EVENT SESSION [obsbench_xe_plans_file] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_file';
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_file') ALTER EVENT SESSION [obsbench_xe_plans_file] ON SERVER STATE = STOP;
SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_plans_file_20261122T000000*.xel', NULL, NULL, NULL);
SELECT COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_plans_file_20261122T000000*.xel', NULL, NULL, NULL) WHERE object_name IN (N'query_post_execution_showplan') AND event_data LIKE N'%obsbench-tag%';
