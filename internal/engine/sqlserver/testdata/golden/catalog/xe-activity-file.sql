-- xe-activity-file: logins, logouts, RPC, batch and statement starting and completed events to an event file with NO_EVENT_LOSS (100 MB files, 10 kept)
-- source: catalog/sqlserver.yaml:112

-- apply
CREATE EVENT SESSION [obsbench_xe_activity_file] ON SERVER
ADD EVENT sqlserver.rpc_starting(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.rpc_completed(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sql_batch_starting(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sql_batch_completed(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sql_statement_starting(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sql_statement_completed(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sp_statement_starting(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sp_statement_completed(ACTION(sqlserver.session_id, sqlserver.client_app_name)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.login(ACTION(sqlserver.session_id, sqlserver.client_app_name)),
ADD EVENT sqlserver.logout(ACTION(sqlserver.session_id))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/obsbench_xe_activity_file_20261122T000000.xel', max_file_size = (100), max_rollover_files = (10))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_activity_file] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_activity_file') ALTER EVENT SESSION [obsbench_xe_activity_file] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_activity_file') DROP EVENT SESSION [obsbench_xe_activity_file] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_activity_file';
SELECT ISNULL(SUM(wait_time_ms), 0) FROM sys.dm_os_wait_stats WHERE wait_type = N'XE_BUFFERMGR_FREEBUF_EVENT';
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_activity_file') ALTER EVENT SESSION [obsbench_xe_activity_file] ON SERVER STATE = STOP;
SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_activity_file_20261122T000000*.xel', NULL, NULL, NULL);
SELECT COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_activity_file_20261122T000000*.xel', NULL, NULL, NULL) WHERE object_name IN (N'sql_statement_completed', N'sp_statement_completed') AND event_data LIKE N'%obsbench-tag%';
