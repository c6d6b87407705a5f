-- xe-locks-no-target: lock_acquired and lock_released to no target: the events fire, their actions run, and nothing keeps them, ALLOW_SINGLE_EVENT_LOSS
-- source: catalog/sqlserver.yaml:223

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_no_target] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 7 AND sqlserver.is_system = 0)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 7 AND sqlserver.is_system = 0))
WITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_no_target] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_no_target') ALTER EVENT SESSION [obsbench_xe_locks_no_target] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_no_target') DROP EVENT SESSION [obsbench_xe_locks_no_target] ON SERVER;
