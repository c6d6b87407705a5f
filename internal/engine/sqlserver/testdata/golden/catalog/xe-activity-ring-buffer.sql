-- xe-activity-ring-buffer: logins, logouts, RPC, batch and statement events to a ring buffer of 10,000 events with NO_EVENT_LOSS
-- source: catalog/sqlserver.yaml:153

-- apply
CREATE EVENT SESSION [obsbench_xe_activity_ring_buffer] ON SERVER
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
ADD TARGET package0.ring_buffer(SET max_events_limit = (10000))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_activity_ring_buffer] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_activity_ring_buffer') ALTER EVENT SESSION [obsbench_xe_activity_ring_buffer] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_activity_ring_buffer') DROP EVENT SESSION [obsbench_xe_activity_ring_buffer] ON SERVER;
