-- xe-audit-file: audit: sql_statement_completed and sp_statement_completed with 13 actions to 10 MB event files (500 kept), NO_EVENT_LOSS, 5 s max dispatch latency
-- source: catalog/sqlserver.yaml:858

-- apply
CREATE EVENT SESSION [obsbench_xe_audit_file] ON SERVER
ADD EVENT sqlserver.sql_statement_completed(ACTION(sqlserver.database_id, sqlserver.database_name, sqlserver.session_id, sqlserver.username, sqlserver.client_hostname, sqlserver.client_app_name, sqlserver.sql_text, sqlserver.query_hash, sqlserver.query_plan_hash, sqlserver.plan_handle, sqlserver.tsql_stack, sqlserver.is_system, package0.collect_system_time)
    WHERE (sqlserver.username <> N'NT AUTHORITY\SYSTEM' AND sqlserver.username <> N'obsbench_no_such_login' AND (NOT sqlserver.like_i_sql_unicode_string(sqlserver.client_app_name, N'%IntelliSense')) AND sqlserver.is_system = 0)),
ADD EVENT sqlserver.sp_statement_completed(ACTION(sqlserver.database_id, sqlserver.database_name, sqlserver.session_id, sqlserver.username, sqlserver.client_hostname, sqlserver.client_app_name, sqlserver.sql_text, sqlserver.query_hash, sqlserver.query_plan_hash, sqlserver.plan_handle, sqlserver.tsql_stack, sqlserver.is_system, package0.collect_system_time)
    WHERE (sqlserver.username <> N'NT AUTHORITY\SYSTEM' AND sqlserver.username <> N'obsbench_no_such_login' AND (NOT sqlserver.like_i_sql_unicode_string(sqlserver.client_app_name, N'%IntelliSense')) AND sqlserver.is_system = 0))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/obsbench_xe_audit_file_20261122T000000.xel', max_file_size = (10), max_rollover_files = (500))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, MAX_DISPATCH_LATENCY = 5 SECONDS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_audit_file] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_audit_file') ALTER EVENT SESSION [obsbench_xe_audit_file] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_audit_file') DROP EVENT SESSION [obsbench_xe_audit_file] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_audit_file';
SELECT ISNULL(SUM(wait_time_ms), 0) FROM sys.dm_os_wait_stats WHERE wait_type = N'XE_BUFFERMGR_FREEBUF_EVENT';
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_audit_file') ALTER EVENT SESSION [obsbench_xe_audit_file] ON SERVER STATE = STOP;
SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_audit_file_20261122T000000*.xel', NULL, NULL, NULL);
SELECT COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/obsbench_xe_audit_file_20261122T000000*.xel', NULL, NULL, NULL) WHERE object_name IN (N'sql_statement_completed', N'sp_statement_completed') AND event_data LIKE N'%obsbench-tag%';
