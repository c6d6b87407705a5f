-- xe-plans-ring-buffer: actual plans (query_post_execution_showplan) to an in-memory ring buffer of 1,000 events; older events are overwritten
-- source: catalog/sqlserver.yaml:50

-- apply
CREATE EVENT SESSION [obsbench_xe_plans_ring_buffer] ON SERVER
ADD EVENT sqlserver.query_post_execution_showplan(ACTION(sqlserver.sql_text, sqlserver.session_id)
    WHERE (sqlserver.database_name = N'obsbench'))
ADD TARGET package0.ring_buffer(SET max_events_limit = (1000))
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_plans_ring_buffer] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_plans_ring_buffer') ALTER EVENT SESSION [obsbench_xe_plans_ring_buffer] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_plans_ring_buffer') DROP EVENT SESSION [obsbench_xe_plans_ring_buffer] ON SERVER;
