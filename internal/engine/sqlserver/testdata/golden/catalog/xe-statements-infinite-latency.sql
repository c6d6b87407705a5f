-- xe-statements-infinite-latency: statement-completed events to a ring buffer of 10,000 events with INFINITE dispatch latency (events reach the target only when buffers fill)
-- source: catalog/sqlserver.yaml:913

-- apply
CREATE EVENT SESSION [obsbench_xe_statements_infinite_latency] ON SERVER
ADD EVENT sqlserver.sql_statement_completed(ACTION(sqlserver.sql_text)
    WHERE (sqlserver.database_name = N'obsbench')),
ADD EVENT sqlserver.sp_statement_completed(ACTION(sqlserver.sql_text)
    WHERE (sqlserver.database_name = N'obsbench'))
ADD TARGET package0.ring_buffer(SET max_events_limit = (10000))
WITH (MAX_MEMORY = 4096 KB, EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, MAX_DISPATCH_LATENCY = INFINITE, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_statements_infinite_latency] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_statements_infinite_latency') ALTER EVENT SESSION [obsbench_xe_statements_infinite_latency] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_statements_infinite_latency') DROP EVENT SESSION [obsbench_xe_statements_infinite_latency] ON SERVER;
