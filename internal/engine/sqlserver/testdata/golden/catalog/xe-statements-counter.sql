-- xe-statements-counter: statement-completed events of the workload's sessions in the dataset's database to an event counter: the cheapest complete count
-- source: catalog/sqlserver.yaml:898

-- apply
CREATE EVENT SESSION [obsbench_xe_statements_counter] ON SERVER
ADD EVENT sqlserver.sql_statement_completed(WHERE (sqlserver.database_id = 7 AND sqlserver.client_app_name = N'obsbench-driver')),
ADD EVENT sqlserver.sp_statement_completed(WHERE (sqlserver.database_id = 7 AND sqlserver.client_app_name = N'obsbench-driver'))
ADD TARGET package0.event_counter
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_statements_counter] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_statements_counter') ALTER EVENT SESSION [obsbench_xe_statements_counter] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_statements_counter') DROP EVENT SESSION [obsbench_xe_statements_counter] ON SERVER;

-- count events (xe)
SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_statements_counter';
SELECT CAST(t.target_data AS nvarchar(max)) FROM sys.dm_xe_session_targets t JOIN sys.dm_xe_sessions s ON s.address = t.event_session_address WHERE s.name = N'obsbench_xe_statements_counter' AND t.target_name = N'event_counter';
